package snapgen

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/plm"
)

// Namespaces of generated objects: most live in the Gateways' namespace;
// the others exercise allowedRoutes selectors and ReferenceGrants.
const (
	nsDefault = "default"
	nsTeamA   = "team-a"
	nsTeamB   = "team-b"
)

func meta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

// namespaces adds the Namespaces, labelled for allowedRoutes selectors.
func (g *gen) namespaces() {
	for _, ns := range []struct{ name, env string }{{nsDefault, ""}, {nsTeamA, "prod"}, {nsTeamB, "dev"}} {
		o := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.name}}
		if ns.env != "" {
			o.Labels = map[string]string{"env": ns.env}
		}
		g.add(o)
	}
}

// servicePorts are the ports a generated Service may have.
var servicePorts = []servicePort{
	{"http", 80, ""},
	{"grpc", 9000, "kubernetes.io/h2c"},
	{"ws", 8080, "kubernetes.io/ws"},
	{"tls", 443, "https"},
	{"h2", 9001, "grpc"},
	{"plain", 81, "http"},
	{"odd", 82, "kubernetes.io/wss"},
}

// addServices adds Services and their EndpointSlices in a namespace.
func (g *gen) addServices(ns string, max int) {
	n := g.upTo(max)
	if ns == nsDefault {
		n = 1 + g.intn(max)
	}
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		svc := &corev1.Service{ObjectMeta: meta(ns, name)}
		ref := serviceRef{name: name}
		for range 1 + g.intn(2) {
			p := oneOf(g, servicePorts...)
			if hasPort(ref.ports, p.port) {
				continue
			}
			ref.ports = append(ref.ports, p)
			sp := corev1.ServicePort{Name: p.name, Port: p.port}
			if p.appProtocol != "" {
				sp.AppProtocol = ptr.To(p.appProtocol)
			}
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
		}
		if len(ref.ports) == 1 && g.one(6) {
			// Only a Service with one port may leave it unnamed.
			svc.Spec.Ports[0].Name, ref.ports[0].name = "", ""
		}
		if g.one(16) {
			svc.Spec.Type = corev1.ServiceTypeExternalName
		}
		g.add(svc)
		g.services[ns] = append(g.services[ns], ref)
		for s := range 1 + g.intn(2) {
			g.endpointSlice(ns, name, s, ref.ports)
		}
	}
}

func hasPort(ps []servicePort, port int32) bool {
	for _, p := range ps {
		if p.port == port {
			return true
		}
	}
	return false
}

// endpointSlice adds an EndpointSlice of a Service with 0-3 endpoints.
func (g *gen) endpointSlice(ns, service string, index int, ports []servicePort) {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  meta(ns, fmt.Sprintf("%s-%d", service, index)),
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	es.Labels = map[string]string{discoveryv1.LabelServiceName: service}
	for _, p := range ports {
		ep := discoveryv1.EndpointPort{Port: ptr.To(oneOf(g, int32(8080), 80, 1, 65535, 9000, 0))}
		if p.name != "" {
			ep.Name = ptr.To(p.name)
		}
		es.Ports = append(es.Ports, ep)
	}
	for range g.upTo(3) {
		e := discoveryv1.Endpoint{Addresses: []string{oneOf(g, "10.0.0.1", "10.0.0.2", "fd00::1", "192.168.1.10",
			"10.0.0.1", "fe80::1%eth0", "not-an-ip", "::ffff:10.0.0.3")}}
		if g.one(6) {
			e.Conditions.Ready = ptr.To(false)
		}
		es.Endpoints = append(es.Endpoints, e)
	}
	g.add(es)
}

// secrets adds TLS Secrets: valid ones, a weak key and a broken one.
func (g *gen) secrets() {
	tls := func(ns, name string, cert, key []byte) {
		g.add(&corev1.Secret{ObjectMeta: meta(ns, name), Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}})
	}
	tls(nsDefault, "cert-0", cert0, key0)
	tls(nsDefault, "cert-1", cert1, key1)
	tls(nsTeamA, "cert-a", cert2, key2)
	tls(nsDefault, "weak-cert", weakCert, weakKey)
	tls(nsDefault, "bad-cert", []byte("not a certificate"), key0)
	for _, ns := range []string{nsDefault, nsTeamA} {
		g.add(&corev1.ConfigMap{ObjectMeta: meta(ns, "ca"), Data: map[string]string{"ca.crt": string(cert0) + string(cert1)}})
	}
	g.add(&corev1.ConfigMap{ObjectMeta: meta(nsDefault, "bad-ca"), Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\nnope\n"}})
}

// secretRef refers to a certificate Secret, valid or not.
func (g *gen) secretRef() gatewayv1.SecretObjectReference {
	if !g.one(16) {
		switch g.intn(4) {
		case 2:
			return gatewayv1.SecretObjectReference{Name: "cert-1"}
		case 3:
			return gatewayv1.SecretObjectReference{Name: "cert-a", Namespace: ptr.To(gatewayv1.Namespace(nsTeamA))}
		}
		return gatewayv1.SecretObjectReference{Name: "cert-0"}
	}
	switch g.intn(4) {
	case 0:
		return gatewayv1.SecretObjectReference{Name: "weak-cert"}
	case 1:
		return gatewayv1.SecretObjectReference{Name: "bad-cert"}
	case 2:
		return gatewayv1.SecretObjectReference{Name: "missing"}
	}
	return gatewayv1.SecretObjectReference{Name: "cert-0", Kind: ptr.To(gatewayv1.Kind("ConfigMap"))}
}

// caRef refers to a CA bundle ConfigMap, valid or not.
func (g *gen) caRef() gatewayv1.ObjectReference {
	r := gatewayv1.ObjectReference{Group: "", Kind: "ConfigMap", Name: "ca"}
	switch g.intn(8) {
	case 3:
		r.Name = "bad-ca"
	case 4:
		r.Name = "missing"
	case 5:
		r.Namespace = ptr.To(gatewayv1.Namespace(nsTeamA))
	}
	return r
}

// referenceGrants lets objects in the default namespace refer to team-a's,
// each grant only sometimes.
func (g *gen) referenceGrants() {
	grant := func(name string, from []gatewayv1beta1.ReferenceGrantFrom, to ...gatewayv1beta1.ReferenceGrantTo) {
		if g.one(2) {
			g.add(&gatewayv1beta1.ReferenceGrant{ObjectMeta: meta(nsTeamA, name), Spec: gatewayv1beta1.ReferenceGrantSpec{From: from, To: to}})
		}
	}
	from := func(group, kind string) gatewayv1beta1.ReferenceGrantFrom {
		return gatewayv1beta1.ReferenceGrantFrom{Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind), Namespace: nsDefault}
	}
	to := func(group, kind string) gatewayv1beta1.ReferenceGrantTo {
		return gatewayv1beta1.ReferenceGrantTo{Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind)}
	}
	grant("routes", []gatewayv1beta1.ReferenceGrantFrom{from(gatewayv1.GroupName, "HTTPRoute"), from(gatewayv1.GroupName, "GRPCRoute")}, to("", "Service"))
	grant("gateways", []gatewayv1beta1.ReferenceGrantFrom{from(gatewayv1.GroupName, "Gateway")}, to("", "Secret"), to("", "ConfigMap"))
	grant("waf", []gatewayv1beta1.ReferenceGrantFrom{from(v1alpha1.GroupVersion.Group, "WAFGatewayBindingPolicy")},
		to(plm.GroupAppProtect, "APPolicy"), to(plm.GroupAppProtect, "APLogConf"))
}

// backendTLSPolicies adds BackendTLSPolicies for some Services.
func (g *gen) backendTLSPolicies() {
	svcs := g.services[nsDefault]
	for i := range g.upTo(2) {
		s := svcs[g.intn(len(svcs))]
		t := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
			Group: "", Kind: "Service", Name: gatewayv1.ObjectName(s.name)}}
		if g.one(2) && s.ports[0].name != "" {
			t.SectionName = ptr.To(gatewayv1.SectionName(s.ports[0].name))
		}
		p := &gatewayv1.BackendTLSPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("btls-%d", i)),
			Spec: gatewayv1.BackendTLSPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{t}}}
		p.CreationTimestamp = g.timestamp()
		v := &p.Spec.Validation
		v.Hostname = gatewayv1.PreciseHostname(g.exactHostname())
		switch g.intn(5) {
		case 0, 1:
			v.CACertificateRefs = []gatewayv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: "ca"}}
		case 2:
			v.WellKnownCACertificates = ptr.To(gatewayv1.WellKnownCACertificatesSystem)
		case 3:
			v.CACertificateRefs = []gatewayv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: oneOf[gatewayv1.ObjectName](g, "bad-ca", "missing")}}
		}
		g.add(p)
	}
}

// timestamps order routes and policies; few distinct values make ties,
// which names then break.
var timestamps = []metav1.Time{
	metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	metav1.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC),
	metav1.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
}

func (g *gen) timestamp() metav1.Time { return oneOf(g, timestamps...) }
