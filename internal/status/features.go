package status

import (
	"sort"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// supported are the Gateway API features Gatewall implements. Each one is
// claimed in GatewayClass status and must pass its conformance tests.
var supported = []features.FeatureName{
	features.SupportBackendTLSPolicy,
	features.SupportGateway,
	features.SupportGatewayAddressEmpty,
	features.SupportGatewayBackendClientCertificate,
	features.SupportGatewayFrontendClientCertificateValidation,
	features.SupportGatewayFrontendClientCertificateValidationInsecureFallback,
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
	features.SupportGatewayInfrastructure,
	features.SupportGatewayPort8080,
	features.SupportGatewayStaticAddresses,
	features.SupportGRPCRoute,
	features.SupportHTTPRoute,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportHTTPRouteBackendProtocolH2C,
	features.SupportHTTPRouteBackendRequestHeaderModification,
	features.SupportHTTPRouteBackendProtocolWebSocket,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteCORS,
	features.SupportHTTPRouteDestinationPortMatching,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteResponseHeaderModification,
	// retry: in the experimental channel's HTTPRoute (v1.6), which a
	// cluster must install for the field to reach Gatewall.
	features.SupportHTTPRouteRetry,
	features.SupportHTTPRouteRetryBackendTimeout,
	features.SupportHTTPRouteRetryConnectionError,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportListenerSet,
	features.SupportReferenceGrant,
	features.SupportTCPRoute,
	features.SupportTLSRoute,
	features.SupportTLSRouteModeMixed,
	features.SupportTLSRouteModeTerminate,
	features.SupportUDPRoute,
}

// SupportedFeatures returns the features for GatewayClass status, sorted by name.
func SupportedFeatures() []gatewayv1.SupportedFeature {
	out := make([]gatewayv1.SupportedFeature, 0, len(supported))
	for _, f := range supported {
		out = append(out, gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(f)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
