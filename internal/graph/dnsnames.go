package graph

import (
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// DNS-named backends: an ExternalName Service, and EndpointSlices of
// addressType FQDN. NGINX 1.22 resolves a name of an upstream only when it
// loads its configuration (a name that does not resolve then fails the
// whole configuration, every tenant's), so names never reach it: the
// configuration does not depend on them, the manager sends them with the
// upstream's endpoints (Backend.Names), and each data-plane pod's
// endpoints client resolves them in the background and hands NGINX the
// addresses they answer, checked by endpoints.Address as an
// EndpointSlice's are. A name that does not resolve leaves its upstream
// without those endpoints (503), and is named in the Gateway's Programmed
// condition; the reference itself resolves (ResolvedRefs stays True, and
// says the data plane resolves the name).
//
// The stream context (TLSRoute, TCPRoute, UDPRoute) has no Lua: its
// upstreams list their endpoints in the configuration. NGINX could
// resolve a name there itself (a resolver and a proxy_pass to a variable),
// but when a connection comes, with no check of the answers Gatewall
// could make: a name answering 127.0.0.1 would reach the data plane's own
// listeners, 169.254.169.254 its node's metadata service. So names are
// refused there, saying why.

// streamNames says why a route passing connections cannot use DNS names.
func streamNames(routeKind string) string {
	return fmt.Sprintf("a %s passes connections through NGINX's stream module, which could resolve a name only itself, when a connection comes, "+
		"with answers Gatewall cannot check (a name answering 127.0.0.1 would reach the data plane's own listeners); "+
		"use a Service with IPv4 or IPv6 endpoints", routeKind)
}

// externalName completes an ExternalName Service's backend: its one
// endpoint is its name, on the backendRef's port (the Service port: its
// clients connect to the name on the port they choose, Kubernetes maps
// nothing).
func externalName(b *Backend, name string, fail func(gatewayv1.RouteConditionReason, string, ...any) (*Backend, gatewayv1.RouteConditionReason)) (*Backend, gatewayv1.RouteConditionReason) {
	// Kubernetes accepts a final dot (an absolute name); every name is
	// resolved as absolute here.
	name = strings.TrimSuffix(name, ".")
	if err := endpoints.CheckName(name); err != nil {
		return fail(gatewayv1.RouteReasonUnsupportedValue, "the ExternalName Service's externalName: %s", err)
	}
	b.ExternalName = name
	b.Names = []string{endpoints.JoinName(name, b.Port)}
	b.Valid = true
	return b, ""
}

// externalNameHosts makes the requests a rule sends to an ExternalName
// Service carry its name as their Host header, as NGINX Gateway Fabric
// does: the name is what the service outside the cluster is known by
// (a CDN or a shared host routes by it, and its certificate names it),
// not the Gateway's hostname. A rule that sets Host itself (a
// URLRewrite's hostname, a RequestHeaderModifier of the rule or of the
// backendRef) keeps its own.
func externalNameHosts(rule *Rule) {
	if rule.Filters.Rewrite != nil && rule.Filters.Rewrite.Hostname != "" || changesHost(rule.Filters.RequestHeaders) {
		return
	}
	for _, b := range rule.Backends {
		if !b.Valid || b.ExternalName == "" || changesHost(b.RequestHeaders) {
			continue
		}
		m := &HeaderModifier{Set: []Header{{Name: "Host", Value: b.ExternalName}}}
		if o := b.RequestHeaders; o != nil {
			m.Set = append(m.Set, o.Set...)
			m.Add, m.Remove = o.Add, o.Remove
		}
		b.RequestHeaders = m
	}
}

// changesHost says whether a modifier sets, adds or removes Host.
func changesHost(m *HeaderModifier) bool {
	for _, n := range changedHeaders(m) {
		if strings.EqualFold(n, "Host") {
			return true
		}
	}
	return false
}

// nameNote says, for a route's ResolvedRefs condition, which names of a
// valid backend the data plane resolves; "" when it has none.
func nameNote(b *Backend) string {
	switch {
	case b.ExternalName != "" && len(b.Names) > 0:
		return fmt.Sprintf("backendRef %s is an ExternalName Service: the data plane resolves %s (a name that does not resolve answers 503 and is named in the Gateway's Programmed condition)",
			b.Name, b.ExternalName)
	case len(b.Names) > 0:
		return fmt.Sprintf("backendRef %s has endpoints that are DNS names (EndpointSlices of addressType FQDN), which the data plane resolves (a name that does not resolve is named in the Gateway's Programmed condition)",
			b.Name)
	}
	return ""
}
