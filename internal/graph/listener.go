package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// Route kinds Gatewall serves.
const (
	KindHTTPRoute = "HTTPRoute"
	KindGRPCRoute = "GRPCRoute"
	KindTLSRoute  = "TLSRoute"
	KindTCPRoute  = "TCPRoute"
	KindUDPRoute  = "UDPRoute"
)

// Listener is one listener of a Gateway, declared by the Gateway itself or
// by a ListenerSet attached to it.
type Listener struct {
	Source gatewayv1.Listener
	Name   string
	// ID names the listener uniquely in its Gateway's configuration: the
	// name for the Gateway's own listeners, namespace/set/name for those of
	// a ListenerSet (listener names are unique only within their object).
	ID string
	// Set is the ListenerSet that declares the listener; nil for the Gateway's own.
	Set *ListenerSet
	// Valid says whether the listener is configured on the data plane.
	Valid bool
	// Attachable says whether routes attach to the listener (and count in
	// its attachedRoutes): it is accepted, even if some of its references
	// (its certificate) do not resolve, which keeps it off the data plane.
	Attachable bool
	// Hostname is the listener's hostname, "" for any.
	Hostname string
	// TLS is the certificate of an HTTPS listener.
	TLS *Certificate
	// ClientValidation, when set, validates the certificates of the
	// listener's clients (the Gateway's tls.frontend for its port).
	ClientValidation *ClientValidation
	// TLSOptions are the listener's tls.options Gatewall reads
	// (tlsoptions.go); the zero value when it sets none.
	TLSOptions validation.TLSOptions
	// CheckProtocols and CheckCurves, when set, are the only protocols
	// and key exchange groups the listener's requests may have been
	// negotiated with (others are answered 421): its HTTPS port's
	// handshake allows more for other listeners (handshake.go).
	CheckProtocols, CheckCurves []string
	// SupportedKinds are the route kinds that may attach.
	SupportedKinds []gatewayv1.RouteGroupKind
	// AttachedRoutes counts the routes attached to this listener.
	AttachedRoutes int32
	// Conditions: Accepted, Conflicted, ResolvedRefs (Programmed comes from the data plane).
	Conditions []metav1.Condition

	allowedNamespace func(namespace string) bool
}

// listenerOwner is the object that declares a listener: the Gateway, or a
// ListenerSet attached to it. Certificates and the namespaces routes may
// come from are resolved from the owner's namespace, and references to
// other namespaces need ReferenceGrants from the owner's kind.
type listenerOwner struct {
	kind      string
	namespace string
}

func gatewayOwner(gw *gatewayv1.Gateway) listenerOwner {
	return listenerOwner{kind: "Gateway", namespace: gw.Namespace}
}

func buildListeners(in *Input, gw *gatewayv1.Gateway) []*Listener {
	// Over the limit the Gateway is refused (checkGatewaySpec); its
	// status lists the first listeners only, as many as it can store.
	own := gw.Spec.Listeners[:min(len(gw.Spec.Listeners), validation.MaxListeners)]
	ls := make([]*Listener, 0, len(own))
	for _, src := range own {
		l := buildListener(in, gw, gatewayOwner(gw), src)
		l.ID = l.Name
		ls = append(ls, l)
	}
	markConflicts(ls)
	return ls
}

func buildListener(in *Input, gw *gatewayv1.Gateway, owner listenerOwner, src gatewayv1.Listener) *Listener {
	l := &Listener{Source: src, Name: string(src.Name), Valid: true, Attachable: true}
	if src.Hostname != nil {
		l.Hostname = string(*src.Hostname)
	}
	accepted := conditions.True(string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerReasonAccepted), "Listener is accepted")
	resolved := conditions.True(string(gatewayv1.ListenerConditionResolvedRefs), string(gatewayv1.ListenerReasonResolvedRefs), "All references are resolved")
	reject := func(reason gatewayv1.ListenerConditionReason, msg string) {
		l.Valid, l.Attachable = false, false
		accepted = conditions.False(string(gatewayv1.ListenerConditionAccepted), string(reason), msg)
	}
	unresolved := func(reason gatewayv1.ListenerConditionReason, msg string) {
		l.Valid = false
		resolved = conditions.False(string(gatewayv1.ListenerConditionResolvedRefs), string(reason), msg)
	}

	switch src.Protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
	case gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType:
		if l.Hostname != "" {
			// The Gateway API ignores it: nothing in a TCP connection or a
			// UDP datagram names a host.
			l.Hostname = ""
			accepted.Message += fmt.Sprintf("; its hostname is ignored: a %s listener passes all its traffic to one route", src.Protocol)
		}
	case gatewayv1.TLSProtocolType:
		if msg := checkTLSListener(src.TLS); msg != "" {
			reject(gatewayv1.ListenerReasonUnsupportedValue, msg)
		}
	default:
		reject(gatewayv1.ListenerReasonUnsupportedProtocol, fmt.Sprintf("protocol %s is not supported; use HTTP, HTTPS, TLS, TCP or UDP", conditions.Quote(string(src.Protocol))))
	}
	if !validPort(int32(src.Port)) {
		reject(gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf("port %d is not between 1 and 65535", src.Port))
	}
	// The name reaches nginx.conf (it tells listeners apart on a port).
	if errs := validation.DNS1123Subdomain(field.NewPath("name"), l.Name); len(errs) > 0 {
		reject(gatewayv1.ListenerReasonUnsupportedValue, errs.ToAggregate().Error())
	}
	if src.Hostname != nil {
		if err := validation.Hostname(string(*src.Hostname)); err != nil {
			reject(gatewayv1.ListenerReasonUnsupportedValue, err.Error())
		}
	}
	if msg := checkListenerTLS(src); msg != "" {
		reject(gatewayv1.ListenerReasonUnsupportedValue, msg)
	}
	if err := listenerLimits(src); err != nil {
		reject(gatewayv1.ListenerReasonUnsupportedValue, err.Error())
	} else if refusal, note := readTLSOptions(l); refusal != "" {
		reject(gatewayv1.ListenerReasonUnsupportedValue, refusal)
	} else if note != "" {
		accepted.Message += "; " + note
	}
	if src.Protocol == gatewayv1.HTTPSProtocolType || src.Protocol == gatewayv1.TLSProtocolType && terminates(src.TLS) {
		cert, reason, err := resolveCertificate(in, owner, src.Protocol, src.TLS)
		if err != nil {
			unresolved(reason, err.Error())
		}
		l.TLS = cert
		if cert != nil && len(src.TLS.CertificateRefs) > 1 {
			accepted.Message += fmt.Sprintf("; only the first of its %d tls.certificateRefs is used (Gatewall serves one certificate per listener)", len(src.TLS.CertificateRefs))
		}
		if v := frontendValidation(gw, src.Port); v != nil && src.Protocol == gatewayv1.TLSProtocolType {
			// An option ignored could be a security setting the owner relies on.
			reject(gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf(
				"port %d has client certificate validation (the Gateway's tls.frontend), which Gatewall applies to HTTPS listeners only; use protocol HTTPS, or another port", src.Port))
		} else if v := frontendValidation(gw, src.Port); v != nil && !knownValidationMode(v.Mode) {
			reject(gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf(
				"the client certificate validation of port %d has mode %s; use AllowValidOnly or AllowInsecureFallback", src.Port, conditions.Quote(string(v.Mode))))
		} else if v != nil {
			cv, valid, reason, err := resolveClientValidation(in, gw, v)
			if err != nil {
				unresolved(reason, err.Error())
				if valid == 0 {
					reject(gatewayv1.ListenerReasonNoValidCACertificate, "no caCertificateRef of the port's client certificate validation resolves")
				}
			}
			l.ClientValidation = cv
		}
	}
	if src.Protocol == gatewayv1.TLSProtocolType && !terminates(src.TLS) && frontendValidation(gw, src.Port) != nil {
		accepted.Message += fmt.Sprintf("; the client certificate validation of port %d (the Gateway's tls.frontend) does not apply to this listener: its connections pass through NGINX to the backends, which terminate TLS", src.Port)
	}
	kinds, err := supportedKinds(src)
	if err != nil {
		// The listener still serves the kinds it supports.
		resolved = conditions.False(string(gatewayv1.ListenerConditionResolvedRefs), string(gatewayv1.ListenerReasonInvalidRouteKinds), err.Error())
	}
	if !isSupportedProtocol(src.Protocol) {
		kinds = nil // no route kind can attach to a protocol Gatewall does not serve
	}
	l.SupportedKinds = kinds
	allowed, err := namespaceFilter(in, owner.namespace, src.AllowedRoutes)
	if err != nil {
		reject(gatewayv1.ListenerReasonUnsupportedValue, err.Error())
	}
	l.allowedNamespace = allowed
	l.Conditions = []metav1.Condition{accepted, resolved,
		conditions.False(string(gatewayv1.ListenerConditionConflicted), string(gatewayv1.ListenerReasonNoConflicts), "No conflicts")}
	return l
}

// checkListenerTLS applies the Gateway API's rule that HTTP listeners have
// no tls (a CEL rule the API server may not have run).
func checkListenerTLS(src gatewayv1.Listener) string {
	if src.TLS != nil && (src.Protocol == gatewayv1.HTTPProtocolType || src.Protocol == gatewayv1.TCPProtocolType || src.Protocol == gatewayv1.UDPProtocolType) {
		return fmt.Sprintf("tls must not be specified for protocol %s", src.Protocol)
	}
	return ""
}

// terminates says whether a TLS listener's tls asks NGINX to terminate
// TLS (mode Terminate, the Gateway API's default).
func terminates(t *gatewayv1.ListenerTLSConfig) bool {
	return t != nil && (t.Mode == nil || *t.Mode == gatewayv1.TLSModeTerminate)
}

// checkTLSListener says why a TLS listener's tls cannot be served. In mode
// Passthrough the TLSRoutes' backends terminate TLS; in mode Terminate
// NGINX does, with the listener's certificate, and passes the decrypted
// bytes on.
func checkTLSListener(t *gatewayv1.ListenerTLSConfig) string {
	switch {
	case t == nil:
		return "tls is required for protocol TLS: set tls.mode Passthrough, or Terminate with tls.certificateRefs"
	case t.Mode != nil && *t.Mode != gatewayv1.TLSModePassthrough && *t.Mode != gatewayv1.TLSModeTerminate:
		return fmt.Sprintf("tls.mode %s is not supported; use Passthrough or Terminate", conditions.Quote(string(*t.Mode)))
	case !terminates(t) && len(t.CertificateRefs) > 0:
		return "tls.certificateRefs must not be set with tls.mode Passthrough: the backends present their own certificates"
	}
	return ""
}

// knownValidationMode says whether a client certificate validation mode is
// one the Gateway API defines ("" is its default, AllowValidOnly).
func knownValidationMode(m gatewayv1.FrontendValidationModeType) bool {
	return m == "" || m == gatewayv1.AllowValidOnly || m == gatewayv1.AllowInsecureFallback
}

// protocolKinds are the route kinds each listener protocol serves, sorted
// (from routeKinds).
var protocolKinds = kindsByProtocol()

func kindsByProtocol() map[gatewayv1.ProtocolType][]string {
	out := map[gatewayv1.ProtocolType][]string{}
	for kind, k := range routeKinds {
		for _, p := range k.protocols {
			out[p] = append(out[p], kind)
		}
	}
	for _, kinds := range out {
		slices.Sort(kinds)
	}
	return out
}

// supportedKinds returns the route kinds a listener admits: those of its
// protocol unless allowedRoutes.kinds narrows them. Unsupported kinds are an error.
func supportedKinds(src gatewayv1.Listener) ([]gatewayv1.RouteGroupKind, error) {
	group := gatewayv1.Group(gatewayGroup)
	served := protocolKinds[src.Protocol]
	var all []gatewayv1.RouteGroupKind
	for _, k := range served {
		all = append(all, gatewayv1.RouteGroupKind{Group: &group, Kind: gatewayv1.Kind(k)})
	}
	if src.AllowedRoutes == nil || len(src.AllowedRoutes.Kinds) == 0 {
		return all, nil
	}
	var kinds []gatewayv1.RouteGroupKind
	var bad []string
	for _, k := range src.AllowedRoutes.Kinds {
		g := gatewayGroup
		if k.Group != nil {
			g = string(*k.Group)
		}
		if g == gatewayGroup && slices.Contains(served, string(k.Kind)) {
			kinds = append(kinds, gatewayv1.RouteGroupKind{Group: &group, Kind: k.Kind})
			continue
		}
		bad = append(bad, g+"/"+string(k.Kind))
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Kind < kinds[j].Kind })
	if len(bad) > 0 {
		return kinds, fmt.Errorf("route kinds not supported: %s", strings.Join(bad, ", "))
	}
	return kinds, nil
}

func (l *Listener) admitsKind(kind string) bool {
	for _, k := range l.SupportedKinds {
		if string(k.Kind) == kind {
			return true
		}
	}
	return false
}

// namespaceFilter returns which route namespaces allowedRoutes admits.
func namespaceFilter(in *Input, gwNamespace string, ar *gatewayv1.AllowedRoutes) (func(string) bool, error) {
	same := func(ns string) bool { return ns == gwNamespace }
	if ar == nil || ar.Namespaces == nil || ar.Namespaces.From == nil {
		return same, nil
	}
	switch *ar.Namespaces.From {
	case gatewayv1.NamespacesFromSame:
		return same, nil
	case gatewayv1.NamespacesFromAll:
		return func(string) bool { return true }, nil
	case gatewayv1.NamespacesFromSelector:
		if ar.Namespaces.Selector == nil {
			return same, fmt.Errorf("allowedRoutes.namespaces.selector is required with from: Selector")
		}
		sel, err := metav1.LabelSelectorAsSelector(ar.Namespaces.Selector)
		if err != nil {
			return same, fmt.Errorf("allowedRoutes.namespaces.selector: %w", err)
		}
		return func(ns string) bool {
			n := in.Namespaces[ns]
			return n != nil && sel.Matches(labels.Set(n.Labels))
		}, nil
	}
	return same, fmt.Errorf("allowedRoutes.namespaces.from %q is not supported", *ar.Namespaces.From)
}

// markConflicts marks listeners that share a port with another protocol, or a
// port and hostname with another listener. Conflicted listeners are not
// configured. UDP ports are apart from TCP ones (HTTP, HTTPS, TLS and TCP
// listeners all take TCP ports), and a TCP or UDP port passes all its
// traffic to one destination: two such listeners on a port conflict.
func markConflicts(ls []*Listener) {
	protocols := map[string]map[string]bool{}
	hostnames := map[string]int{}
	for _, l := range ls {
		if !isSupportedProtocol(l.Source.Protocol) {
			continue
		}
		p := transportPort(l)
		if protocols[p] == nil {
			protocols[p] = map[string]bool{}
		}
		protocols[p][portFamily(l.Source.Protocol)] = true
		hostnames[p+"/"+l.Hostname]++
	}
	for _, l := range ls {
		if !isSupportedProtocol(l.Source.Protocol) {
			continue
		}
		var reason gatewayv1.ListenerConditionReason
		var msg string
		p := transportPort(l)
		switch {
		case len(protocols[p]) > 1:
			reason, msg = gatewayv1.ListenerReasonProtocolConflict, fmt.Sprintf("another listener uses port %d with a different protocol", l.Source.Port)
		case hostnames[p+"/"+l.Hostname] > 1 && passesPort(l.Source.Protocol):
			reason, msg = gatewayv1.ListenerReasonProtocolConflict, fmt.Sprintf("another %s listener uses port %d, which passes all its traffic to one route", l.Source.Protocol, l.Source.Port)
		case hostnames[p+"/"+l.Hostname] > 1:
			reason, msg = gatewayv1.ListenerReasonHostnameConflict, fmt.Sprintf("another listener uses port %d with the same hostname %q", l.Source.Port, l.Hostname)
		default:
			continue
		}
		l.Valid, l.Attachable = false, false
		l.Conditions = conditions.Set(l.Conditions, conditions.True(string(gatewayv1.ListenerConditionConflicted), string(reason), msg))
		l.Conditions = conditions.Set(l.Conditions, conditions.False(string(gatewayv1.ListenerConditionAccepted), string(reason), msg))
	}
}

// transportPort names a listener's port with its transport: "udp/53", "tcp/443".
func transportPort(l *Listener) string {
	if l.Source.Protocol == gatewayv1.UDPProtocolType {
		return fmt.Sprintf("udp/%d", l.Source.Port)
	}
	return fmt.Sprintf("tcp/%d", l.Source.Port)
}

// passesPort says whether a listener of the protocol passes all its port's
// traffic to one route (TCP, UDP).
func passesPort(p gatewayv1.ProtocolType) bool {
	return p == gatewayv1.TCPProtocolType || p == gatewayv1.UDPProtocolType
}

// reservedPorts are the ports the data plane's own servers use in the pod
// under an effective NginxProxy, with what uses each: a listener there would
// fail to bind, or take the port from them.
func reservedPorts(np *v1alpha2.NginxProxySpec) map[gatewayv1.PortNumber]string {
	out := map[gatewayv1.PortNumber]string{}
	if p := np.MetricsPort(); p != 0 {
		out[gatewayv1.PortNumber(p)] = "the data plane's metrics (the NginxProxy's metrics.port; 9113 unless set)"
	}
	if np.WAF == v1alpha2.WAFEnabled {
		out[v1alpha2.WAFEnforcerPort] = "the WAF enforcer"
	}
	return out
}

// rejectReservedPorts refuses the listeners on a port the data plane uses
// (reserved: reservedPorts, and for a ListenerSet's the readiness port).
func rejectReservedPorts(ls []*Listener, reserved map[gatewayv1.PortNumber]string) {
	for _, l := range ls {
		what, ok := reserved[l.Source.Port]
		if !ok || !l.Attachable || l.Source.Protocol == gatewayv1.UDPProtocolType { // the reserved ports are TCP ports
			continue
		}
		l.Valid, l.Attachable = false, false
		l.Conditions = conditions.Set(l.Conditions, conditions.False(string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerReasonPortUnavailable),
			fmt.Sprintf("port %d is taken in the data-plane pod by %s; use another port", l.Source.Port, what)))
	}
}

// portFamily is what a protocol needs of its port: listeners of one family
// share a port. HTTPS and TLS (passthrough) both start with a TLS
// handshake, whose server name (SNI) tells them apart.
func portFamily(p gatewayv1.ProtocolType) string {
	if p == gatewayv1.HTTPSProtocolType || p == gatewayv1.TLSProtocolType {
		return "tls"
	}
	return string(p)
}

func isSupportedProtocol(p gatewayv1.ProtocolType) bool {
	return p == gatewayv1.HTTPProtocolType || p == gatewayv1.HTTPSProtocolType || p == gatewayv1.TLSProtocolType || passesPort(p)
}
