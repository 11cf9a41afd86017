package graph

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// Gateway is one Gateway of a class Gatewall serves, with everything attached to it.
type Gateway struct {
	Source *gatewayv1.Gateway
	Key    types.NamespacedName
	Class  *GatewayClass
	// Valid says whether the Gateway is accepted; an invalid Gateway gets no data plane.
	Valid bool
	// attachable says whether routes may attach: the Gateway as a whole is
	// acceptable, even if none of its listeners is valid.
	attachable bool
	// overrides says what of the Gateway's NginxProxy and
	// spec.infrastructure its class does not allow (overridesNote).
	overrides string
	// NginxProxy is the effective data-plane settings: the class's NginxProxy
	// overlaid by the Gateway's. Never nil.
	NginxProxy *v1alpha2.NginxProxySpec
	// Listeners are the Gateway's own, in spec order.
	Listeners []*Listener
	// ListenerSets name the Gateway as their parent, in precedence order;
	// the listeners of the accepted ones join the Gateway's.
	ListenerSets []*ListenerSet
	// Routes that name this Gateway in a parentRef, sorted by kind, namespace, name.
	Routes []*Route
	// Conditions of the Gateway (Accepted; Programmed is added from the data plane's answer).
	Conditions []metav1.Condition
	// NotProgrammed is what of the effective NginxProxy the data plane
	// does not carry out, each "field: why" (NotProgrammed, and
	// rewriteClientIP's ports that X-Forwarded-For cannot reach): the
	// Gateway's Programmed condition names them.
	NotProgrammed []string
	// BackendClientCert is the certificate NGINX presents to backends it
	// speaks TLS to (spec.tls.backend), if any.
	BackendClientCert *Certificate
	// Snippets are the SnippetsPolicies that target the Gateway, decided
	// (snippets.go).
	Snippets *GatewaySnippets

	readinessPort int32
	// parametersFrom names the NginxProxies the effective one comes from.
	parametersFrom string
	// sockets is the budget of listening sockets of an accepted Gateway.
	sockets *socketBudget
	// sessions is the budget of TLS session caches (tlsoptions.go).
	sessions *sessionBudget
	// handshakes are what each HTTPS port negotiates (handshake.go).
	handshakes map[gatewayv1.PortNumber]*PortHandshake
	// refresh is what RefreshEndpoints reads of the routes, gathered once.
	refresh *lazyRefreshPlan
}

// Build builds the graph of one Gateway. It returns nil when the Gateway does
// not exist or its class is not Gatewall's (then Gatewall reports nothing).
func Build(in *Input, gwKey types.NamespacedName) *Gateway {
	gw := in.Gateways[gwKey]
	if gw == nil {
		return nil
	}
	class := BuildGatewayClass(in, string(gw.Spec.GatewayClassName))
	if class == nil {
		return nil
	}
	g := &Gateway{Source: gw, Key: gwKey, Class: class, refresh: &lazyRefreshPlan{}}
	rejected := g.accept(in)
	g.readinessPort = readinessPort(g.NginxProxy, gw.Spec.Listeners)
	if rejected == nil {
		rejected = g.startSocketBudget(in)
	}
	g.Listeners = buildListeners(in, gw)
	rejectReservedPorts(g.Listeners, reservedPorts(g.NginxProxy))
	if g.sockets != nil {
		g.sockets.admitListeners(g.Listeners)
		g.sessions = newSessionBudget()
		g.sessions.admit(g.Listeners)
	}
	g.Conditions = append(g.Conditions, g.acceptedCondition(rejected))
	if c := insecureFrontendValidation(gw); c != nil && rejected == nil {
		g.Conditions = append(g.Conditions, *c)
	}
	if rejected == nil {
		cert, c := backendClientCertificate(in, gw)
		if c != nil {
			g.BackendClientCert = cert
			g.Conditions = append(g.Conditions, *c)
		}
	}
	g.ListenerSets = buildListenerSets(in, g)
	g.settleHandshakes()
	g.Snippets = buildGatewaySnippets(in, g)
	g.Routes = buildRoutes(in, g)
	countAttachedRoutes(g)
	if g.Valid {
		g.NotProgrammed = NotProgrammed(g.NginxProxy)
		if n := g.forwardedForNote(); n != "" {
			g.NotProgrammed = append(g.NotProgrammed, n)
		}
	}
	return g
}

// AttachedListenerSets counts the ListenerSets attached to the Gateway.
func (g *Gateway) AttachedListenerSets() int32 {
	var n int32
	for _, s := range g.ListenerSets {
		if s.Accepted {
			n++
		}
	}
	return n
}

// accept checks what makes a whole Gateway unusable and resolves the
// effective NginxProxy; it returns the Accepted=False condition, or nil.
func (g *Gateway) accept(in *Input) *metav1.Condition {
	gw := g.Source
	reject := func(reason gatewayv1.GatewayConditionReason, format string, args ...any) *metav1.Condition {
		c := conditions.False(string(gatewayv1.GatewayConditionAccepted), string(reason), fmt.Sprintf(format, args...))
		g.NginxProxy = EffectiveNginxProxy(nil, nil)
		return &c
	}
	if msg, ok := in.Unreadable("Gateway", g.Key); ok {
		return reject(gatewayv1.GatewayReasonInvalid, "%s", msg)
	}
	if !g.Class.Valid {
		return reject(gatewayv1.GatewayReasonInvalid, "GatewayClass %s is not accepted", gw.Spec.GatewayClassName)
	}
	// The name reaches file names and labels of the data plane; only an API
	// server bypass or an offline manifest can make it invalid.
	if err := validation.ObjectReference(gw.Namespace, gw.Name); err != nil {
		return reject(gatewayv1.GatewayReasonInvalid, "%s", err)
	}
	if msg := checkGatewaySpec(gw); msg != "" {
		return reject(gatewayv1.GatewayReasonInvalid, "%s", msg)
	}
	var gwNP *v1alpha2.NginxProxy
	if infra := gw.Spec.Infrastructure; infra != nil && infra.ParametersRef != nil {
		ref := infra.ParametersRef
		if string(ref.Group) != v1alpha2.GroupVersion.Group || ref.Kind != "NginxProxy" {
			return reject(gatewayv1.GatewayReasonInvalidParameters,
				"infrastructure.parametersRef must refer to a %s NginxProxy, not %s %s", v1alpha2.GroupVersion.Group, ref.Group, ref.Kind)
		}
		np, err := lookupNginxProxy(in, gw.Namespace, ref.Name)
		if err != nil {
			return reject(gatewayv1.GatewayReasonInvalidParameters, "infrastructure.parametersRef: %s", err)
		}
		gwNP = np
	}
	gwSpec, refusedFields := allowedOverrides(g.Class.NginxProxy, gwNP)
	g.NginxProxy = EffectiveNginxProxy(specOf(g.Class.NginxProxy), gwSpec)
	_, _, refusedKeys := InfrastructureMetadata(gw, g.NginxProxy)
	g.overrides = overridesNote(g.Class.NginxProxy, gwNP, refusedFields, refusedKeys)
	if msg := checkOverlay(g.Class.NginxProxy, gwNP, g.NginxProxy); msg != "" {
		return reject(gatewayv1.GatewayReasonInvalidParameters, "%s", msg)
	}
	if msg := checkAddresses(gw, g.NginxProxy); msg != "" {
		return reject(gatewayv1.GatewayReasonUnsupportedAddress, "%s", msg)
	}
	g.parametersFrom = nginxProxySources(g.Class.NginxProxy, gwNP)
	return nil
}

// startSocketBudget starts the budget of the Gateway's listening sockets
// (sockets.go), or returns why its effective NginxProxy leaves no room for
// any listener: the Gateway is then refused for its parameters.
func (g *Gateway) startSocketBudget(in *Input) *metav1.Condition {
	b, problem := newSocketBudget(g.NginxProxy, g.readinessPort, l4Listeners(in, g.Source))
	if problem != "" {
		c := conditions.False(string(gatewayv1.GatewayConditionAccepted), string(gatewayv1.GatewayReasonInvalidParameters), g.parametersFrom+": "+problem)
		return &c
	}
	g.sockets = b
	return nil
}

// l4Listeners counts the TCP and UDP listeners of a Gateway and of the
// ListenerSets that name it, accepted or not: they share the connections
// kept for such listeners (sharedL4Connections), and counting before they
// are admitted keeps each one's share the same whichever are refused.
func l4Listeners(in *Input, gw *gatewayv1.Gateway) int {
	n := 0
	count := func(p gatewayv1.ProtocolType) {
		if p == gatewayv1.TCPProtocolType || p == gatewayv1.UDPProtocolType {
			n++
		}
	}
	for _, l := range gw.Spec.Listeners {
		count(l.Protocol)
	}
	gwKey := key(gw.Namespace, gw.Name)
	for _, ls := range in.ListenerSets {
		if ListenerSetParent(ls) == gwKey {
			for _, l := range ls.Spec.Listeners {
				count(l.Protocol)
			}
		}
	}
	return n
}

// nginxProxySources names the NginxProxies an effective NginxProxy comes from.
func nginxProxySources(class, gateway *v1alpha2.NginxProxy) string {
	name := func(np *v1alpha2.NginxProxy) string { return np.Namespace + "/" + np.Name }
	switch {
	case class != nil && gateway != nil:
		return fmt.Sprintf("the effective NginxProxy (the GatewayClass's %s overlaid by the Gateway's %s)", name(class), name(gateway))
	case class != nil:
		return fmt.Sprintf("the GatewayClass's NginxProxy %s", name(class))
	case gateway != nil:
		return fmt.Sprintf("the Gateway's NginxProxy %s", name(gateway))
	}
	return "the default NginxProxy settings (no NginxProxy is set)"
}

// checkGatewaySpec applies the Gateway API's rules on a whole Gateway that
// Gatewall relies on (CEL rules the API server may not have run): listener
// names are unique (routes attach by name and listener statuses are keyed
// by it: a status with a name twice is refused whole), and so are the ports
// of tls.frontend.perPort (else which client certificate validation
// applies would be a guess).
func checkGatewaySpec(gw *gatewayv1.Gateway) string {
	if err := overLimit(gatewayLimits(gw)); err != nil {
		return err.Error()
	}
	names := make([]string, 0, len(gw.Spec.Listeners))
	for _, l := range gw.Spec.Listeners {
		names = append(names, string(l.Name))
	}
	if n := repeated(names); n != "" {
		return fmt.Sprintf("spec.listeners: the name %s is used more than once; listener names must be unique within the Gateway", conditions.Quote(n))
	}
	if gw.Spec.TLS != nil && gw.Spec.TLS.Frontend != nil {
		var ports []string
		for _, p := range gw.Spec.TLS.Frontend.PerPort {
			ports = append(ports, fmt.Sprint(p.Port))
		}
		if p := repeated(ports); p != "" {
			return fmt.Sprintf("spec.tls.frontend.perPort: port %s is listed more than once; each port may have one client certificate validation", p)
		}
	}
	return ""
}

// repeated returns the first value that occurs twice in list, or "".
func repeated(list []string) string {
	seen := map[string]bool{}
	for _, v := range list {
		if seen[v] {
			return v
		}
		seen[v] = true
	}
	return ""
}

func (g *Gateway) acceptedCondition(rejected *metav1.Condition) metav1.Condition {
	if rejected != nil {
		g.Valid = false
		return *rejected
	}
	g.attachable = true
	var invalid []string
	for _, l := range g.Listeners {
		if !l.Valid {
			invalid = append(invalid, l.Name)
		}
	}
	accepted := string(gatewayv1.GatewayConditionAccepted)
	switch {
	case len(invalid) == 0:
		g.Valid = true
		return conditions.True(accepted, string(gatewayv1.GatewayReasonAccepted), "Gateway is accepted"+g.overrides)
	case len(invalid) < len(g.Listeners):
		g.Valid = true
		return conditions.True(accepted, string(gatewayv1.GatewayReasonListenersNotValid),
			"Gateway is accepted, but these listeners are not valid: "+strings.Join(invalid, ", ")+g.overrides)
	default:
		g.Valid = false
		return conditions.False(accepted, string(gatewayv1.GatewayReasonListenersNotValid), "no listener is valid")
	}
}

// ValidListeners returns the listeners that can be configured: the
// Gateway's own, then those of its attached ListenerSets.
func (g *Gateway) ValidListeners() []*Listener {
	return g.listeners(func(l *Listener) bool { return l.Valid })
}

// AcceptedListeners returns the listeners the Gateway accepts, including
// those kept off the data plane only by a reference that does not resolve
// (a certificate Secret missing or broken): the Gateway's own, then those of
// its attached ListenerSets. They are what its Service exposes, so that a
// Secret coming and going changes NGINX's configuration, not the Service
// and the load balancer in front of it.
func (g *Gateway) AcceptedListeners() []*Listener {
	return g.listeners(func(l *Listener) bool { return l.Attachable })
}

func (g *Gateway) listeners(keep func(*Listener) bool) []*Listener {
	var out []*Listener
	for _, l := range g.Listeners {
		if keep(l) {
			out = append(out, l)
		}
	}
	for _, s := range g.ListenerSets {
		if !s.Accepted {
			continue
		}
		for _, l := range s.Listeners {
			if keep(l) {
				out = append(out, l)
			}
		}
	}
	return out
}
