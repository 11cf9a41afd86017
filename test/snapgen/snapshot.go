package snapgen

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/scheme"
)

// Size bounds how many objects a snapshot has.
type Size struct {
	Gateways, Listeners, ListenerSets int
	Routes, Rules, Matches, Filters   int
	Backends, Services, Policies      int
}

// Small snapshots keep a fuzz execution, every property checked, to a
// few milliseconds of one core.
var Small = Size{Gateways: 2, Listeners: 4, ListenerSets: 1, Routes: 5, Rules: 3, Matches: 3, Filters: 3, Backends: 3, Services: 3, Policies: 2}

// Large snapshots make configurations the size of a busy Gateway's.
var Large = Size{Gateways: 2, Listeners: 8, ListenerSets: 2, Routes: 24, Rules: 4, Matches: 4, Filters: 4, Backends: 4, Services: 6, Policies: 4}

// Snapshot is a generated set of cluster objects and the WAF bundles the
// fetcher has.
type Snapshot struct {
	ControllerName string
	// Objects in the order generated.
	Objects []client.Object
	// Bundles by sha256.
	Bundles map[string]graph.Bundle
}

// Generate generates a snapshot whose GatewayClass names controllerName,
// with every decision from src.
func Generate(src Source, size Size, controllerName string) *Snapshot {
	g := &gen{src: src, size: size, snap: &Snapshot{ControllerName: controllerName, Bundles: map[string]graph.Bundle{}},
		services: map[string][]serviceRef{}}
	g.namespaces()
	g.classes()
	g.secrets()
	g.addServices(nsDefault, size.Services)
	g.addServices(nsTeamA, 2)
	g.referenceGrants()
	g.backendTLSPolicies()
	for i := range 1 + g.upTo(size.Gateways-1) {
		g.gateway(i)
	}
	for i := range g.upTo(size.ListenerSets) {
		g.listenerSet(i)
	}
	for i := range 1 + g.intn(size.Routes) {
		if g.one(4) {
			g.grpcRoute(i)
		} else {
			g.httpRoute(i)
		}
	}
	g.plm()
	for i := range g.upTo(size.Policies) {
		g.proxySettingsPolicy(i)
	}
	for i := range g.upTo(size.Policies) {
		g.wafPolicy(i)
	}
	// Generated last, so the objects above stay what they were for a seed.
	for i := range g.upTo(size.Policies) {
		g.clientSettingsPolicy(i)
	}
	for i := range g.upTo(size.Policies) {
		g.rateLimitPolicy(i)
	}
	for i := range g.upTo(size.Policies) {
		g.upstreamSettingsPolicy(i)
	}
	for _, np := range g.nginxProxies {
		g.nginxFields(&np.Spec)
	}
	return g.snap
}

func (g *gen) add(o client.Object) { g.snap.Objects = append(g.snap.Objects, o) }

// Input returns the snapshot as the graph's input, with the PLM group the
// generated PLM objects use. The objects are shared, not copied: the graph
// only reads them.
func (s *Snapshot) Input() *graph.Input {
	in := graph.NewInput(s.ControllerName)
	in.PLMGroup = plm.GroupAppProtect
	for _, o := range s.Objects {
		in.Add(o)
	}
	for sha, b := range s.Bundles {
		in.Bundles[sha] = b
	}
	return in
}

// Without returns the snapshot without the objects drop says to drop.
func (s *Snapshot) Without(drop func(client.Object) bool) *Snapshot {
	out := &Snapshot{ControllerName: s.ControllerName, Bundles: s.Bundles}
	for _, o := range s.Objects {
		if !drop(o) {
			out.Objects = append(out.Objects, o)
		}
	}
	return out
}

// YAML writes the snapshot as manifests `gatewall render` reads (with
// the statuses Gatewall reads: PLM objects', and bundles a WAF policy
// records in force), followed, as comments, by what the fetcher has of
// each bundle they refer to: a failure found on a snapshot can be
// reproduced from them.
func (s *Snapshot) YAML() ([]byte, error) {
	sch := scheme.New()
	var b bytes.Buffer
	for _, o := range s.Objects {
		gvk, err := apiutil.GVKForObject(o, sch)
		if err != nil {
			return nil, err
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
		if m, ok := u["metadata"].(map[string]any); ok && m["creationTimestamp"] == nil {
			delete(m, "creationTimestamp")
		}
		if st, ok := u["status"].(map[string]any); !ok || len(st) == 0 || readsNoStatus[gvk.Kind] {
			delete(u, "status")
		}
		data, err := yaml.Marshal(u)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	manifests := b.String()
	for _, sha := range sortedKeys(s.Bundles) {
		if !strings.Contains(manifests, sha) {
			continue
		}
		bd := s.Bundles[sha]
		fmt.Fprintf(&b, "# bundle %s: %s %s %q\n", sha, bundleStates[bd.State], bd.Reason, bd.Data)
	}
	return b.Bytes(), nil
}

// readsNoStatus are the kinds whose status Gatewall writes, never reads.
var readsNoStatus = map[string]bool{"Gateway": true, "GatewayClass": true, "HTTPRoute": true, "GRPCRoute": true,
	"ListenerSet": true, "ProxySettingsPolicy": true, "BackendTLSPolicy": true, "NginxProxy": true}

var bundleStates = map[graph.BundleState]string{graph.BundlePending: "pending", graph.BundleFetched: "fetched", graph.BundleFailed: "failed"}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
