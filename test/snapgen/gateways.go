package snapgen

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// className is the GatewayClass of Gatewall's Gateways; otherClass is
// another controller's.
const (
	className  = "nginx"
	otherClass = "other"
)

// classes adds Gatewall's GatewayClass, possibly with an NginxProxy, and
// another controller's.
func (g *gen) classes() {
	gc := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(g.snap.ControllerName)}}
	if g.one(2) {
		gc.Spec.ParametersRef = &gatewayv1.ParametersReference{Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy",
			Name: "np-class", Namespace: ptr.To(gatewayv1.Namespace(nsDefault))}
		if g.one(32) {
			gc.Spec.ParametersRef.Name = "missing"
		}
		g.nginxProxy("np-class")
	}
	g.add(gc)
	g.add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: otherClass},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/other-controller"}})
}

// nginxProxy adds an NginxProxy in the default namespace.
func (g *gen) nginxProxy(name string) {
	np := &v1alpha2.NginxProxy{ObjectMeta: meta(nsDefault, name)}
	s := &np.Spec
	s.WAF = oneOf(g, v1alpha2.WAFEnabled, v1alpha2.WAFDisabled, "")
	if g.one(2) {
		s.IPFamily = ptr.To(oneOf(g, v1alpha2.IPFamilyDual, v1alpha2.IPFamilyIPv4, v1alpha2.IPFamilyIPv6))
	}
	if g.one(2) {
		// 80 leaves the listeners a few sockets after the 64 kept for
		// clients and the data plane's own: the newest are refused.
		s.WorkerConnections = ptr.To(oneOf[int32](g, 1024, 512, 65535, 80))
		if g.one(16) {
			// Too few for the data plane's own sockets and its clients:
			// the Gateway is refused for its NginxProxy.
			s.WorkerConnections = ptr.To(oneOf[int32](g, 1, 3, 64))
		}
	}
	if g.one(2) {
		s.Logging = &v1alpha2.NginxLogging{ErrorLevel: ptr.To(oneOf[v1alpha2.NginxErrorLevel](g, "warn", "debug", "emerg", "error"))}
	}
	if g.one(20) {
		// Values the CRD refuses.
		switch g.intn(4) {
		case 0:
			s.WAF = "on"
		case 1:
			s.IPFamily = ptr.To[v1alpha2.IPFamily]("ipv5")
		case 2:
			s.WorkerConnections = ptr.To(oneOf[int32](g, 0, 100000))
		default:
			s.Logging = &v1alpha2.NginxLogging{ErrorLevel: ptr.To[v1alpha2.NginxErrorLevel]("verbose")}
		}
	}
	g.add(np)
	g.nginxProxies = append(g.nginxProxies, np)
}

// gateway adds a Gateway with its listeners.
func (g *gen) gateway(index int) {
	ns := nsDefault
	if index > 0 && g.one(2) {
		ns = nsTeamA
	}
	gw := &gatewayv1.Gateway{ObjectMeta: meta(ns, fmt.Sprintf("gw-%d", index)), Spec: gatewayv1.GatewaySpec{GatewayClassName: className}}
	if g.one(12) {
		gw.Spec.GatewayClassName = oneOf[gatewayv1.ObjectName](g, otherClass, "missing")
	}
	if ns == nsDefault && g.one(3) {
		gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
			Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "np-gw"}}
		g.nginxProxy("np-gw")
	}
	ref := &gatewayRef{namespace: ns, name: gw.Name, object: gw}
	for i := range 1 + g.intn(g.size.Listeners) {
		l := g.listener(fmt.Sprintf("l%d", i))
		gw.Spec.Listeners = append(gw.Spec.Listeners, l)
		ref.listeners = append(ref.listeners, listenerRef{name: string(l.Name), port: int32(l.Port)})
	}
	if g.one(4) {
		gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{}
		if g.one(2) {
			gw.Spec.TLS.Frontend = &gatewayv1.FrontendTLSConfig{}
			v := g.frontendValidation()
			if g.one(2) {
				gw.Spec.TLS.Frontend.Default.Validation = v
			} else {
				gw.Spec.TLS.Frontend.PerPort = []gatewayv1.TLSPortConfig{{Port: g.port(), TLS: gatewayv1.TLSConfig{Validation: v}}}
			}
		}
		if g.one(2) {
			r := g.secretRef()
			gw.Spec.TLS.Backend = &gatewayv1.GatewayBackendTLS{ClientCertificateRef: &r}
		}
	}
	if g.one(3) {
		gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{
			From: ptr.To(oneOf(g, gatewayv1.NamespacesFromSame, gatewayv1.NamespacesFromAll, gatewayv1.NamespacesFromNone))}}
	}
	g.add(gw)
	g.gateways = append(g.gateways, ref)
}

func (g *gen) frontendValidation() *gatewayv1.FrontendTLSValidation {
	v := &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{g.caRef()}}
	if g.one(3) {
		v.Mode = gatewayv1.AllowInsecureFallback
	}
	return v
}

// port is a listener port; few values, so listeners share ports.
func (g *gen) port() gatewayv1.PortNumber {
	return oneOf[gatewayv1.PortNumber](g, 80, 443, 8080, 8443, 80, 443, 9080, 1, 65535)
}

// listener is one listener: HTTP or HTTPS, with or without a hostname.
func (g *gen) listener(name string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: g.port(), Protocol: gatewayv1.HTTPProtocolType}
	if g.one(3) {
		l.Protocol = gatewayv1.HTTPSProtocolType
		l.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{g.secretRef()}}
		if g.one(3) {
			l.TLS.Options = g.tlsOptions()
		}
	}
	if g.bad() {
		switch g.intn(4) {
		case 0:
			l.Name = oneOf[gatewayv1.SectionName](g, "L_0", "")
		case 1:
			l.Protocol = oneOf[gatewayv1.ProtocolType](g, gatewayv1.TCPProtocolType, gatewayv1.TLSProtocolType, gatewayv1.HTTPSProtocolType)
		case 2:
			l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough), CertificateRefs: []gatewayv1.SecretObjectReference{g.secretRef()}}
		}
	}
	if g.one(3) {
		l.Hostname = ptr.To(gatewayv1.Hostname(g.hostname()))
	}
	if g.one(4) {
		l.AllowedRoutes = g.allowedRoutes()
	}
	return l
}

func (g *gen) allowedRoutes() *gatewayv1.AllowedRoutes {
	ar := &gatewayv1.AllowedRoutes{}
	switch g.intn(4) {
	case 0:
		ar.Namespaces = &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}
	case 1:
		ar.Namespaces = &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	case 2:
		ar.Namespaces = &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}
	}
	if g.one(6) {
		ar.Kinds = []gatewayv1.RouteGroupKind{{Kind: oneOf[gatewayv1.Kind](g, "HTTPRoute", "GRPCRoute", "TCPRoute")}}
	}
	return ar
}

// listenerSet adds a ListenerSet attached to the first Gateway.
func (g *gen) listenerSet(index int) {
	parent := g.gateways[0]
	ns := oneOf(g, parent.namespace, nsTeamA)
	ls := &gatewayv1.ListenerSet{ObjectMeta: meta(ns, fmt.Sprintf("set-%d", index))}
	ls.CreationTimestamp = g.timestamp()
	ls.Spec.ParentRef = gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(parent.name)}
	if !g.one(4) {
		parent.object.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	}
	if ns != parent.namespace {
		ls.Spec.ParentRef.Namespace = ptr.To(gatewayv1.Namespace(parent.namespace))
	}
	for i := range 1 + g.intn(2) {
		l := g.listener(fmt.Sprintf("s%d", i))
		ls.Spec.Listeners = append(ls.Spec.Listeners, gatewayv1.ListenerEntry(l))
	}
	g.add(ls)
	g.listenerSets = append(g.listenerSets, routeRef{kind: "ListenerSet", namespace: ns, name: ls.Name})
}

// tlsOptions are an HTTPS listener's tls.options: NGINX Gateway Fabric's
// keys with values NGINX and the data plane's OpenSSL take, a key
// Gatewall does not read, and rarely values it must refuse (one with
// NGINX syntax in it).
func (g *gen) tlsOptions() map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue {
	o := map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{}
	set := func(k string, values ...string) {
		if g.one(2) {
			o[gatewayv1.AnnotationKey(k)] = gatewayv1.AnnotationValue(oneOf(g, values...))
		}
	}
	set("nginx.org/ssl-protocols", "TLSv1.2 TLSv1.3", "TLSv1.3", "TLSv1.2")
	set("nginx.org/ssl-ciphers", "HIGH:!aNULL:!MD5", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:!aNULL",
		"kEECDH+AESGCM:@STRENGTH", "DEFAULT:@SECLEVEL=0", "ALL:-RSA:+SHA1")
	set("nginx.org/ssl-prefer-server-ciphers", "on", "off")
	set("nginx.org/ssl-ecdh-curve", "auto", "P-384", "X25519:P-256", "P-521:ffdhe2048", "secp384r1:brainpoolP256r1")
	set("nginx.org/ssl-session-cache", "off", "none", "32k", "1m", "10m")
	set("nginx.org/ssl-session-timeout", "1", "5m", "1d", "7d")
	if g.one(8) {
		o["example.com/other"] = "x"
	}
	if g.bad() {
		o[gatewayv1.AnnotationKey(oneOf(g, "nginx.org/ssl-ciphers", "nginx.org/ssl-ecdh-curve", "nginx.org/ssl-session-timeout"))] =
			gatewayv1.AnnotationValue(oneOf(g, "HIGH:!aNUL", "LOW", `HIGH"; include /etc/passwd; #`, "P-256:prime256v1", "500ms", "SSLv3"))
	}
	return o
}
