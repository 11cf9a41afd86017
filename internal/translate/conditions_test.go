package translate_test

import (
	"slices"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/validation"
)

// TestConditionsFitTheAPIServer: the API server stores at most 8
// conditions in a Gateway's status, a listener's, a route parent's; one
// more and the whole status write is refused. Each policy kind that
// targets Gateways or routes adds an <Kind>Affected condition to them
// (translate.Extra), on top of the types packages graph and status set
// themselves: the sum must stay within the limit as kinds are added.
func TestConditionsFitTheAPIServer(t *testing.T) {
	affecting := func(kind string) []string {
		var out []string
		for _, k := range policy.Kinds {
			if k.AffectedType() != "" && slices.Contains(k.Targets().Kinds, kind) {
				out = append(out, k.AffectedType())
			}
		}
		return out
	}
	gateway := append([]string{
		string(gatewayv1.GatewayConditionAccepted),
		string(gatewayv1.GatewayConditionProgrammed),
		string(gatewayv1.GatewayConditionResolvedRefs),                   // tls.backend's client certificate
		string(gatewayv1.GatewayConditionInsecureFrontendValidationMode), // tls.frontend's
	}, affecting("Gateway")...)
	listener := []string{
		string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerConditionResolvedRefs),
		string(gatewayv1.ListenerConditionConflicted), string(gatewayv1.ListenerConditionProgrammed),
	}
	for _, kind := range []string{graph.KindHTTPRoute, graph.KindGRPCRoute, graph.KindTLSRoute} {
		parent := append([]string{
			string(gatewayv1.RouteConditionAccepted), string(gatewayv1.RouteConditionResolvedRefs), string(gatewayv1.RouteConditionPartiallyInvalid),
		}, affecting(kind)...)
		if len(parent) > validation.MaxConditions {
			t.Errorf("a %s parent can have %d conditions: %v", kind, len(parent), parent)
		}
	}
	if len(gateway) > validation.MaxConditions {
		t.Errorf("a Gateway can have %d conditions: %v", len(gateway), gateway)
	}
	if len(listener) > validation.MaxConditions {
		t.Errorf("a listener can have %d conditions: %v", len(listener), listener)
	}
	t.Logf("at most %d conditions on a Gateway, %d on a listener", len(gateway), len(listener))
}
