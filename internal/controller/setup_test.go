package controller

import (
	"testing"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/policy"
)

// TestPolicyKindsFollowInstalledCRDs: without the Gateway API's
// BackendTLSPolicy CRD, the engine's reconcilers, watches and snapshot
// lists leave that kind out (watching a kind that is not served would keep
// the manager from starting); Gatewall's own kinds are always there.
func TestPolicyKindsFollowInstalledCRDs(t *testing.T) {
	names := func(ks []policy.Kind) map[string]bool {
		out := map[string]bool{}
		for _, k := range ks {
			out[k.Name()] = true
		}
		return out
	}
	served := apis.New(logr.Discard(), nil)
	if err := served.Serve(apis.BackendTLSPolicy, ""); err != nil {
		t.Fatal(err)
	}
	with, without := names(Config{APIs: served}.policyKinds()), names(Config{}.policyKinds())
	if len(with) != len(policy.Kinds) {
		t.Errorf("with every CRD: %v, want all %d kinds", with, len(policy.Kinds))
	}
	if without["BackendTLSPolicy"] || len(without) != len(policy.Kinds)-1 {
		t.Errorf("without the BackendTLSPolicy CRD: %v, want every kind but BackendTLSPolicy", without)
	}
	if !without["WAFGatewayBindingPolicy"] || !without["ProxySettingsPolicy"] {
		t.Errorf("without the BackendTLSPolicy CRD: %v lacks Gatewall's own kinds", without)
	}
}
