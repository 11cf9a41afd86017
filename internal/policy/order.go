package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/validation"
)

// TargetsOf resolves a policy's targetRefs (same namespace as the policy).
func TargetsOf(p client.Object, refs []gatewayv1.LocalPolicyTargetReference) []graph.ObjectRef {
	out := make([]graph.ObjectRef, 0, len(refs))
	for _, r := range refs {
		out = append(out, graph.ObjectRef{Kind: string(r.Kind), Key: types.NamespacedName{Namespace: p.GetNamespace(), Name: string(r.Name)}})
	}
	return out
}

// values lists a map's policies, in no particular order.
func values[T client.Object](m map[types.NamespacedName]T) []T {
	out := make([]T, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out
}

// unreadable is the Accepted=False condition of a policy that could not
// be read (its stub holds only its targets), or nil.
func unreadable(in *graph.Input, kind string, p client.Object) *metav1.Condition {
	msg, ok := in.Unreadable(kind, client.ObjectKeyFromObject(p))
	if !ok {
		return nil
	}
	c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), msg)
	return &c
}

func sortPolicies[T client.Object](ps []T) []T {
	out := append([]T(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool { return graph.Older(out[i], out[j]) })
	return out
}

// Gateway is a Gateway's graph with what every kind's evaluation reads of
// its routes, computed once per translation (NewGateway).
type Gateway struct {
	*graph.Gateway
	// attached are the routes attached to a listener; refs are their
	// targets in the order of their String, the order kinds report them in.
	// TLSRoutes, TCPRoutes and UDPRoutes are left out: their connections
	// (datagrams) pass through NGINX
	// untouched, so no policy of an HTTP proxy applies to them, and none
	// claims to.
	attached map[graph.ObjectRef]*graph.Route
	refs     []graph.ObjectRef
	// unattached are the routes that name the Gateway in a parentRef but
	// attached to none of its listeners, sorted: a policy targeting one has
	// no effect there, and says so rather than nothing.
	unattached []graph.ObjectRef
}

// NewGateway prepares a Gateway's graph for the kinds' evaluations.
func NewGateway(g *graph.Gateway) *Gateway {
	pg := &Gateway{Gateway: g, attached: map[graph.ObjectRef]*graph.Route{}}
	type keyed struct {
		ref graph.ObjectRef
		key string
	}
	var refs []keyed
	for _, r := range g.Routes { // sorted by kind, namespace, name
		if graph.PassesConnections(r.Kind) {
			continue
		}
		ref := graph.ObjectRef{Kind: r.Kind, Key: r.Key}
		if !slices.ContainsFunc(r.Parents, func(p *graph.ParentRef) bool { return p.Attached() }) {
			pg.unattached = append(pg.unattached, ref)
			continue
		}
		pg.attached[ref] = r
		refs = append(refs, keyed{ref, ref.String()})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].key < refs[j].key })
	pg.refs = make([]graph.ObjectRef, len(refs))
	for i, r := range refs {
		pg.refs[i] = r.ref
	}
	return pg
}

// notAttachedMessage says that a policy's target route is not attached to
// a Gateway.
func notAttachedMessage(ref graph.ObjectRef, g *Gateway) string {
	name := ref.String()
	if validation.ObjectReference(ref.Key.Namespace, ref.Key.Name) != nil {
		name = ref.Kind + " " + conditions.Quote(ref.Key.String()) // the route is refused for its name
	}
	return fmt.Sprintf("%s is not attached to Gateway %s (its status says why), so nothing of the policy applies to it there", name, g.Key)
}

func gatewayRef(g *Gateway) graph.ObjectRef { return graph.ObjectRef{Kind: "Gateway", Key: g.Key} }

func names(keys []types.NamespacedName) string {
	s := make([]string, 0, len(keys))
	for _, k := range keys {
		s = append(s, k.String())
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// outsideTLSListeners is what an accepted Gateway policy's message adds when
// the Gateway has TLS listeners, which no HTTP policy reaches: "; it does
// not <verb> the Gateway's TLS listener(s) ...", or "".
func outsideTLSListeners(g *graph.Gateway, verb string) string {
	ls := tlsListeners(g)
	if len(ls) == 0 {
		return ""
	}
	word := "listener"
	if len(ls) > 1 {
		word += "s"
	}
	return fmt.Sprintf("; it does not %s the Gateway's TLS %s %s: their connections pass to TLSRoute backends without HTTP processing",
		verb, word, strings.Join(ls, ", "))
}

// tlsListeners are the Gateway's valid TLS listeners (its own and its
// ListenerSets', by ID), sorted: their connections reach TLSRoute backends
// without HTTP processing, so no HTTP policy reaches them.
func tlsListeners(g *graph.Gateway) []string {
	var out []string
	add := func(ls []*graph.Listener) {
		for _, l := range ls {
			if l.Valid && l.Source.Protocol == gatewayv1.TLSProtocolType {
				out = append(out, l.ID)
			}
		}
	}
	add(g.Listeners)
	for _, s := range g.ListenerSets {
		add(s.Listeners)
	}
	sort.Strings(out)
	return out
}
