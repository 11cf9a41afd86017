package graph

import (
	"cmp"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// Backend protocols NGINX can proxy to.
const (
	ProtocolHTTP      = "http"
	ProtocolH2C       = "h2c"
	ProtocolWebSocket = "websocket"
)

// Backend is a backendRef resolved to a Service port and its ready endpoints.
type Backend struct {
	// Name is "namespace/service:port" for messages.
	Name   string
	Weight int32
	// Valid backends can be proxied to; invalid ones answer 500.
	Valid bool
	Err   string

	Service types.NamespacedName
	// Port is the Service port the ref names.
	Port int32
	// Protocol is what NGINX speaks to the endpoints (from the port's appProtocol).
	Protocol string
	// Endpoints are the ready endpoints, sorted; none means 503.
	Endpoints []Endpoint
	// Names are the ready endpoints that are DNS names, with their port
	// (endpoints.JoinName), sorted: an ExternalName Service's name, or
	// the endpoints of EndpointSlices of addressType FQDN. The data plane
	// resolves them (names.go); no answer means 503.
	Names []string
	// ExternalName is the name of an ExternalName Service ("" for other
	// Services): requests to it carry it as their Host header (names.go).
	ExternalName string
	// Refused says which endpoints of a valid backend were left out and
	// why (see Input.endpoints, and the Gateway's endpoint budget:
	// endpointbudget.go); the route's ResolvedRefs names them.
	Refused []string
	// Unsent says the Gateway's endpoint budget has no room for the
	// backend's upstream: the data plane is sent nothing of it, and it
	// answers 503.
	Unsent bool
	// RequestHeaders modify the requests this backend receives (the
	// backendRef's RequestHeaderModifier), after the rule's filters.
	RequestHeaders *HeaderModifier
	// TLS, when set, is how NGINX speaks TLS to the endpoints (the
	// BackendTLSPolicy of the Service port).
	TLS *BackendTLS
	// ClusterIP is the Service's cluster IP; "" for a headless Service, or
	// one whose clusterIP is not an address an endpoint could have.
	ClusterIP string

	// slices says the backend's endpoints are those of the EndpointSlices
	// of its Service's port portName, of protocol portProtocol (which
	// RefreshEndpoints reads again); false for an ExternalName Service,
	// whose name is its endpoint.
	slices       bool
	portName     string
	portProtocol corev1.Protocol
}

// Endpoint is one address and port of a backend.
type Endpoint struct {
	Address string
	Port    int32
}

// maxWeight is the Gateway API's largest backendRef weight.
const maxWeight = 1000000

// resolveBackend resolves a backendRef of a route in routeNamespace.
func resolveBackend(in *Input, routeKind, routeNamespace string, ref gatewayv1.BackendObjectReference, weightRef *int32) (*Backend, gatewayv1.RouteConditionReason) {
	group, kind, ns := coreGroup, "Service", routeNamespace
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	weight := int32(1)
	if weightRef != nil {
		weight = *weightRef
	}
	b := &Backend{Name: fmt.Sprintf("%s/%s", ns, ref.Name), Weight: weight, Service: key(ns, string(ref.Name))}
	fail := func(reason gatewayv1.RouteConditionReason, format string, args ...any) (*Backend, gatewayv1.RouteConditionReason) {
		b.Err = fmt.Sprintf("backendRef %s: ", b.Name) + fmt.Sprintf(format, args...)
		return b, reason
	}
	if err := validation.ObjectReference(ns, string(ref.Name)); err != nil {
		b.Name = conditions.Quote(b.Name) // as written, which is not a name
		return fail(gatewayv1.RouteReasonUnsupportedValue, "%s", err)
	}
	if weight < 0 || weight > maxWeight {
		b.Weight = 0
		return fail(gatewayv1.RouteReasonUnsupportedValue, "weight %d is not between 0 and %d", weight, maxWeight)
	}
	if group != coreGroup || kind != "Service" {
		return fail(gatewayv1.RouteReasonInvalidKind, "%s is not supported; use a Service", describeRef(group, kind, string(ref.Name)))
	}
	if ref.Port == nil {
		return fail(gatewayv1.RouteReasonUnsupportedValue, "port is required for a Service")
	}
	if !validPort(*ref.Port) {
		return fail(gatewayv1.RouteReasonUnsupportedValue, "port %d is not between 1 and 65535", *ref.Port)
	}
	b.Port = *ref.Port
	b.Name = fmt.Sprintf("%s/%s:%d", ns, ref.Name, b.Port)
	if !referenceAllowed(in, refGrantFrom{gatewayGroup, routeKind, routeNamespace}, refGrantTo{coreGroup, "Service", ns, string(ref.Name)}) {
		return fail(gatewayv1.RouteReasonRefNotPermitted, "not permitted: no ReferenceGrant in %s allows %ss from %s%s", ns, routeKind, routeNamespace, in.UnreadableGrants(ns))
	}
	svc := in.Services[b.Service]
	if svc == nil {
		if msg, ok := in.Unreadable("Service", b.Service); ok {
			return fail(gatewayv1.RouteReasonBackendNotFound, "%s", msg)
		}
		return fail(gatewayv1.RouteReasonBackendNotFound, "Service not found")
	}
	// A Service may have a port number twice, for TCP and for UDP (DNS):
	// the one of the route's transport is used, else the first.
	var port *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Port == b.Port && (port == nil || checkPortProtocol(routeKind, port.Protocol) != "" && checkPortProtocol(routeKind, p.Protocol) == "") {
			port = p
		}
	}
	external := svc.Spec.Type == corev1.ServiceTypeExternalName
	if port == nil && external && len(svc.Spec.Ports) == 0 {
		// An ExternalName Service need not list ports: its clients
		// connect to its name on the port they choose.
		port = &corev1.ServicePort{Port: b.Port}
	}
	if port == nil {
		return fail(gatewayv1.RouteReasonBackendNotFound, "the Service has no port %d", b.Port)
	}
	if why := checkPortProtocol(routeKind, port.Protocol); why != "" {
		proto := cmp.Or(port.Protocol, corev1.ProtocolTCP)
		return fail(gatewayv1.RouteReasonUnsupportedProtocol, "the Service's port %d is %s; %s", b.Port, conditions.Quote(string(proto)), why)
	}
	if external && PassesConnections(routeKind) {
		return fail(gatewayv1.RouteReasonUnsupportedValue, "an ExternalName Service cannot be the backend of a %s: %s", routeKind, streamNames(routeKind))
	}
	if PassesConnections(routeKind) {
		// NGINX passes the connection's bytes (a UDPRoute's datagrams) on:
		// the port's appProtocol and any BackendTLSPolicy do not apply.
		b.Protocol = ProtocolTCP
		if routeKind == KindUDPRoute {
			b.Protocol = ProtocolUDP
		}
		var names []string
		b.slices, b.portName, b.portProtocol = true, port.Name, port.Protocol
		b.Endpoints, names, b.Refused = in.endpoints(b.Service, port.Name, port.Protocol)
		if len(names) > 0 {
			b.Refused = append(b.Refused, fmt.Sprintf("its %d endpoints that are DNS names (EndpointSlices of addressType FQDN) are not used: %s",
				len(names), streamNames(routeKind)))
		}
		b.Valid = true
		return b, ""
	}
	tls, err := backendTLS(in, b.Service, port)
	if err != nil {
		return fail(gatewayv1.RouteReasonUnsupportedValue, "%s", err)
	}
	proto, err := backendProtocol(routeKind, port.AppProtocol, tls != nil)
	if err != nil {
		return fail(gatewayv1.RouteReasonUnsupportedProtocol, "%s", err)
	}
	b.Protocol, b.TLS = proto, tls
	if external {
		return externalName(b, svc.Spec.ExternalName, fail)
	}
	if ip, why := endpointIP(svc.Spec.ClusterIP); why == "" {
		// Only a plain unicast address reaches NGINX, as for endpoints
		// ("None" is a headless Service; a zone may hold any text).
		b.ClusterIP = ip
	}
	b.slices, b.portName, b.portProtocol = true, port.Name, port.Protocol
	b.Endpoints, b.Names, b.Refused = in.endpoints(b.Service, port.Name, port.Protocol)
	b.Valid = true
	return b, ""
}

// checkPortProtocol says why a route of the kind cannot use a Service port
// of the protocol ("" is TCP, Kubernetes' default), or "".
func checkPortProtocol(routeKind string, p corev1.Protocol) string {
	switch {
	case routeKind == KindUDPRoute && p != corev1.ProtocolUDP:
		return "a UDPRoute passes datagrams to UDP ports only"
	case routeKind == KindUDPRoute:
		return ""
	case p != "" && p != corev1.ProtocolTCP && PassesConnections(routeKind):
		return "a " + routeKind + " passes connections to TCP ports only"
	case p != "" && p != corev1.ProtocolTCP:
		return "NGINX proxies HTTP and gRPC over TCP only"
	}
	return ""
}

// backendProtocol maps a Service port's appProtocol to what NGINX speaks
// (over TLS when the port has a BackendTLSPolicy).
func backendProtocol(routeKind string, appProtocol *string, tls bool) (string, error) {
	ap := ""
	if appProtocol != nil {
		ap = strings.ToLower(*appProtocol)
	}
	https := ap == "https" || ap == "kubernetes.io/https"
	if https && !tls {
		return "", fmt.Errorf("appProtocol %q needs a BackendTLSPolicy for the Service port: Gatewall speaks TLS to backends only with a certificate to verify", ap)
	}
	if routeKind == KindGRPCRoute {
		switch {
		case ap == "", ap == "grpc", ap == "kubernetes.io/h2c" && !tls, ap == "h2c" && !tls, https:
			return ProtocolH2C, nil
		}
		return "", fmt.Errorf("appProtocol %q cannot carry gRPC; use kubernetes.io/h2c (or https with a BackendTLSPolicy), or leave it unset", ap)
	}
	if tls && (ap == "kubernetes.io/h2c" || ap == "h2c") {
		return "", fmt.Errorf("appProtocol %q is cleartext HTTP/2, but a BackendTLSPolicy applies to the port", ap)
	}
	switch {
	case https:
		return ProtocolHTTP, nil
	}
	switch ap {
	case "", "http", "kubernetes.io/http":
		return ProtocolHTTP, nil
	case "kubernetes.io/ws":
		return ProtocolWebSocket, nil
	case "kubernetes.io/h2c":
		return ProtocolH2C, nil
	}
	return "", fmt.Errorf("appProtocol %q is not supported for HTTPRoute backends; NGINX proxies HTTP/1.1, WebSocket (kubernetes.io/ws) and HTTP/2 without TLS (kubernetes.io/h2c)", ap)
}

// validPort says whether a port number is one TCP can use.
func validPort(p int32) bool { return p >= 1 && p <= 65535 }
