package status

import (
	"sort"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// Requirement is a part of the Gateway API that a feature needs the
// cluster to serve: an optional kind's CRD (Field ""), or a field of a
// kind's CRD that only some channels carry (the experimental channel's
// HTTPRoute retry, say). A field the cluster's CRD lacks is pruned by the
// API server before Gatewall sees it: claiming its feature would mislead
// every tool and user reading the GatewayClass.
type Requirement struct {
	Kind string
	// Field is a path in the kind's schema from its root, "[]" marking a
	// list's items: "spec.rules[].retry".
	Field string
}

// The parts of the Gateway API that some clusters do not serve.
var (
	needsRetry       = &Requirement{Kind: "HTTPRoute", Field: "spec.rules[].retry"}
	needsListenerSet = &Requirement{Kind: "ListenerSet"}
	needsBackendTLS  = &Requirement{Kind: "BackendTLSPolicy"}
	needsTCPRoute    = &Requirement{Kind: "TCPRoute"}
	needsTLSRoute    = &Requirement{Kind: "TLSRoute"}
	needsUDPRoute    = &Requirement{Kind: "UDPRoute"}
)

// supported are the Gateway API features Gatewall implements, with what
// the cluster must serve for each (nil: the core kinds Gatewall needs
// anyway). Each one claimed in GatewayClass status must pass its
// conformance tests.
var supported = []struct {
	name  features.FeatureName
	needs *Requirement
}{
	{features.SupportBackendTLSPolicy, needsBackendTLS},
	{features.SupportGateway, nil},
	{features.SupportGatewayAddressEmpty, nil},
	{features.SupportGatewayBackendClientCertificate, nil},
	{features.SupportGatewayFrontendClientCertificateValidation, nil},
	{features.SupportGatewayFrontendClientCertificateValidationInsecureFallback, nil},
	{features.SupportGatewayHTTPListenerIsolation, nil},
	{features.SupportGatewayHTTPSListenerDetectMisdirectedRequests, nil},
	{features.SupportGatewayInfrastructure, nil},
	{features.SupportGatewayPort8080, nil},
	{features.SupportGatewayStaticAddresses, nil},
	{features.SupportGRPCRoute, nil},
	{features.SupportHTTPRoute, nil},
	{features.SupportHTTPRoute303RedirectStatusCode, nil},
	{features.SupportHTTPRoute307RedirectStatusCode, nil},
	{features.SupportHTTPRoute308RedirectStatusCode, nil},
	{features.SupportHTTPRouteBackendProtocolH2C, nil},
	{features.SupportHTTPRouteBackendRequestHeaderModification, nil},
	{features.SupportHTTPRouteBackendProtocolWebSocket, nil},
	{features.SupportHTTPRouteBackendTimeout, nil},
	{features.SupportHTTPRouteCORS, nil},
	{features.SupportHTTPRouteDestinationPortMatching, nil},
	{features.SupportHTTPRouteHostRewrite, nil},
	{features.SupportHTTPRouteMethodMatching, nil},
	{features.SupportHTTPRouteNamedRouteRule, nil},
	{features.SupportHTTPRouteParentRefPort, nil},
	{features.SupportHTTPRoutePathRedirect, nil},
	{features.SupportHTTPRoutePathRewrite, nil},
	{features.SupportHTTPRoutePortRedirect, nil},
	{features.SupportHTTPRouteQueryParamMatching, nil},
	{features.SupportHTTPRouteRequestMirror, nil},
	{features.SupportHTTPRouteRequestMultipleMirrors, nil},
	{features.SupportHTTPRouteRequestPercentageMirror, nil},
	{features.SupportHTTPRouteRequestTimeout, nil},
	{features.SupportHTTPRouteResponseHeaderModification, nil},
	// retry: in the experimental channel's HTTPRoute (v1.6) only.
	{features.SupportHTTPRouteRetry, needsRetry},
	{features.SupportHTTPRouteRetryBackendTimeout, needsRetry},
	{features.SupportHTTPRouteRetryConnectionError, needsRetry},
	{features.SupportHTTPRouteSchemeRedirect, nil},
	{features.SupportListenerSet, needsListenerSet},
	{features.SupportReferenceGrant, nil},
	{features.SupportTCPRoute, needsTCPRoute},
	{features.SupportTLSRoute, needsTLSRoute},
	{features.SupportTLSRouteModeMixed, needsTLSRoute},
	{features.SupportTLSRouteModeTerminate, needsTLSRoute},
	{features.SupportUDPRoute, needsUDPRoute},
}

// Fields are the optional fields some features need, for the manager to
// look for in the schemas the API server serves.
func Fields() []Requirement {
	var out []Requirement
	for _, r := range Requirements() {
		if r.Field != "" {
			out = append(out, r)
		}
	}
	return out
}

// Requirements are every optional kind and field some feature needs.
func Requirements() []Requirement {
	seen := map[Requirement]bool{}
	var out []Requirement
	for _, f := range supported {
		if f.needs != nil && !seen[*f.needs] {
			seen[*f.needs] = true
			out = append(out, *f.needs)
		}
	}
	return out
}

// SupportedFeatures returns the features for GatewayClass status, sorted by
// name: those whose requirement serves says the cluster serves (nil
// serves everything: gatewall render, which has no cluster to ask).
func SupportedFeatures(serves func(Requirement) bool) []gatewayv1.SupportedFeature {
	out := make([]gatewayv1.SupportedFeature, 0, len(supported))
	for _, f := range supported {
		if f.needs != nil && serves != nil && !serves(*f.needs) {
			continue
		}
		out = append(out, gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(f.name)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
