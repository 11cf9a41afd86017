package snapgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/graph"
)

// targetRefs picks 1-3 targets among the Gateways and routes of a
// namespace, and sometimes one that does not exist.
func (g *gen) targetRefs(ns string, routesOnly bool) []gatewayv1.LocalPolicyTargetReference {
	var refs []gatewayv1.LocalPolicyTargetReference
	add := func(kind, name string) {
		for _, r := range refs {
			if string(r.Kind) == kind && string(r.Name) == name {
				return
			}
		}
		refs = append(refs, gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(name)})
	}
	var gws []*gatewayRef
	for _, gw := range g.gateways {
		if gw.namespace == ns {
			gws = append(gws, gw)
		}
	}
	var routes []routeRef
	for _, r := range g.routes {
		if r.namespace == ns {
			routes = append(routes, r)
		}
	}
	gatewayTargets := !routesOnly && len(gws) > 0 && (len(routes) == 0 || g.one(2))
	for range 1 + g.intn(3) {
		switch {
		case g.one(16):
			add(oneOf(g, "HTTPRoute", "Gateway", "Service"), "missing")
		case gatewayTargets:
			add("Gateway", gws[g.intn(len(gws))].name)
		case len(routes) > 0:
			r := routes[g.intn(len(routes))]
			add(r.kind, r.name)
		}
	}
	if len(refs) == 0 {
		add("Gateway", "missing")
	}
	return refs
}

// proxySettingsPolicy adds a ProxySettingsPolicy.
func (g *gen) proxySettingsPolicy(index int) {
	p := &v1alpha1.ProxySettingsPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("psp-%d", index))}
	p.CreationTimestamp = g.timestamp()
	p.Spec.TargetRefs = g.targetRefs(nsDefault, false)
	b := &v1alpha1.ProxyBuffering{}
	if g.one(3) {
		b.Disable = ptr.To(g.one(2))
	}
	if g.one(2) {
		b.BufferSize = ptr.To(v1alpha1.Size(g.bufferSize()))
	}
	if g.one(2) {
		b.Buffers = &v1alpha1.ProxyBuffers{Number: oneOf[int32](g, 8, 2, 4, 256, 1, 300), Size: v1alpha1.Size(g.bufferSize())}
	}
	if g.one(2) {
		b.BusyBuffersSize = ptr.To(v1alpha1.Size(g.bufferSize()))
	}
	if !g.one(16) {
		p.Spec.Buffering = b
	}
	g.add(p)
}

// plmObject is a generated APPolicy or APLogConf.
type plmObject struct {
	namespace, name string
	state           string
}

// plmObjects are the PLM objects WAF policies may refer to: compiled,
// pending and invalid ones, in two namespaces.
var plmObjects = struct{ policies, logs []plmObject }{
	policies: []plmObject{
		{nsDefault, "base", plm.BundleStateReady}, {nsDefault, "strict", plm.BundleStateReady},
		{nsTeamA, "shared", plm.BundleStateReady}, {nsDefault, "compiling", plm.BundleStatePending},
		{nsDefault, "broken", plm.BundleStateInvalid},
	},
	logs: []plmObject{
		{nsDefault, "log-all", plm.BundleStateReady}, {nsDefault, "log-blocked", plm.BundleStateReady},
		{nsTeamA, "log-shared", plm.BundleStateReady}, {nsDefault, "log-compiling", plm.BundleStatePending},
	},
}

// bundleData is the content of an object's bundle (a stand-in for a
// compiled tarball) and its sha256.
func bundleData(o plmObject) ([]byte, string) {
	data := []byte("bundle of " + o.namespace + "/" + o.name)
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])
}

// plm adds the PLM objects with their statuses, and what the fetcher has
// of each bundle: fetched, failed, or nothing yet.
func (g *gen) plm() {
	add := func(kind string, o plmObject) {
		data, sha := bundleData(o)
		st := plm.Status{Bundle: &plm.Bundle{State: o.state}, Processing: &plm.Processing{Datetime: "2026-01-01T00:00:00Z"}}
		if o.state == plm.BundleStateReady {
			st.Bundle.Location, st.Bundle.Sha256 = "s3://plm/"+o.name+".tgz", sha
		}
		if o.state == plm.BundleStateInvalid {
			st.Processing.Errors = []string{"policy does not compile"}
		}
		m := meta(o.namespace, o.name)
		switch kind {
		case "APPolicy":
			g.add(&appprotectv1.APPolicy{ObjectMeta: m, Status: st})
		default:
			g.add(&appprotectv1.APLogConf{ObjectMeta: m, Status: st})
		}
		switch g.intn(6) {
		case 4:
			g.snap.Bundles[sha] = graph.Bundle{State: graph.BundleFailed, Reason: v1alpha1.WAFReasonFetchError, Message: "storage unreachable"}
		case 5:
			g.snap.Bundles[sha] = graph.Bundle{State: graph.BundleFailed, Reason: v1alpha1.WAFReasonIntegrityError, Message: "checksum mismatch"}
		default:
			g.snap.Bundles[sha] = graph.Bundle{State: graph.BundleFetched, Data: data, FetchedAt: timestamps[0]}
		}
	}
	for _, o := range plmObjects.policies {
		add("APPolicy", o)
	}
	for _, o := range plmObjects.logs {
		add("APLogConf", o)
	}
}

// plmRef refers to one of the objects, or a missing one.
func (g *gen) plmRef(objs []plmObject) v1alpha1.PLMObjectReference {
	if g.one(12) {
		return v1alpha1.PLMObjectReference{Name: "missing"}
	}
	o := objs[g.intn(len(objs))]
	ref := v1alpha1.PLMObjectReference{Name: o.name}
	if o.namespace != nsDefault || g.one(4) {
		ref.Namespace = ptr.To(o.namespace)
	}
	return ref
}

// wafPolicy adds a WAFGatewayBindingPolicy.
func (g *gen) wafPolicy(index int) {
	p := &v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("waf-%d", index))}
	p.CreationTimestamp = g.timestamp()
	p.Spec.TargetRefs = g.targetRefs(nsDefault, g.one(2))
	p.Spec.APPolicySource = g.plmRef(plmObjects.policies)
	for i := range g.upTo(3) {
		l := v1alpha1.SecurityLog{APLogConfSource: g.plmRef(plmObjects.logs)}
		if g.one(2) {
			l.Name = ptr.To(fmt.Sprintf("log-%d", i))
		}
		switch g.intn(4) {
		case 1:
			l.Destination = v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationStderr}
		case 2:
			l.Destination = v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationFile,
				File: &v1alpha1.FileDestination{Path: oneOf(g, "/var/log/app_protect/security.log", "/var/log/app_protect/a-b_c.1", "/tmp/x.log", "/var/log/app_protect/../x")}}
		case 3:
			l.Destination = v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationSyslog,
				Syslog: &v1alpha1.SyslogDestination{Server: oneOf(g, "syslog.example.com:514", "10.0.0.1:514", "1.2.3:514", "a;b:1", name253[:60]+":65535")}}
		}
		p.Spec.SecurityLogs = append(p.Spec.SecurityLogs, l)
	}
	if g.one(4) {
		// A bundle recorded in force by an earlier reconcile.
		o := plmObjects.policies[g.intn(len(plmObjects.policies))]
		_, sha := bundleData(o)
		p.Status.APPolicyStatus = &v1alpha1.BundleReferenceStatus{Name: o.name, Namespace: o.namespace,
			Bundle:      v1alpha1.BundleSummary{State: plm.BundleStateReady, Location: "s3://plm/" + o.name + ".tgz", Sha256: sha},
			LastFetched: ptr.To(metav1.NewTime(timestamps[1].Time))}
	}
	g.add(p)
}
