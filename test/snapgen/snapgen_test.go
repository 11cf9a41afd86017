package snapgen_test

import (
	"bytes"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/test/snapgen"
)

const controller = "example.com/gatewall-test"

func yamlOf(t *testing.T, s *snapgen.Snapshot) []byte {
	t.Helper()
	y, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// TestSameChoicesSameSnapshot: a seed, its recorded choices replayed, and
// those choices encoded as fuzz input all give the same snapshot.
func TestSameChoicesSameSnapshot(t *testing.T) {
	for seed := range uint64(20) {
		rec := snapgen.Record(snapgen.FromSeed(seed))
		want := yamlOf(t, snapgen.Generate(rec, snapgen.Large, controller))
		for name, src := range map[string]snapgen.Source{
			"seed":   snapgen.FromSeed(seed),
			"replay": snapgen.FromValues(snapgen.Values(rec.Draws)),
			"bytes":  snapgen.FromBytes(snapgen.Encode(rec.Draws)),
		} {
			if got := yamlOf(t, snapgen.Generate(src, snapgen.Large, controller)); !bytes.Equal(got, want) {
				t.Errorf("seed %d: %s gives another snapshot", seed, name)
			}
		}
	}
}

// TestExhaustedSourceIsSmallest: a source that has no choices left gives
// the simplest snapshot: one Gateway with one HTTP listener, one route.
func TestExhaustedSourceIsSmallest(t *testing.T) {
	s := snapgen.Generate(snapgen.FromBytes(nil), snapgen.Large, controller)
	counts := map[string]int{}
	for _, o := range s.Objects {
		switch o := o.(type) {
		case *gatewayv1.Gateway:
			counts["Gateway"]++
			if len(o.Spec.Listeners) != 1 || o.Spec.Listeners[0].Protocol != gatewayv1.HTTPProtocolType {
				t.Errorf("listeners %+v, want one HTTP listener", o.Spec.Listeners)
			}
		case *gatewayv1.HTTPRoute:
			counts["HTTPRoute"]++
		case *gatewayv1.GRPCRoute:
			counts["GRPCRoute"]++
		}
	}
	if counts["Gateway"] != 1 || counts["HTTPRoute"] != 1 || counts["GRPCRoute"] != 0 {
		t.Errorf("got %v, want one Gateway and one HTTPRoute", counts)
	}
}

// allFeatures are what every large enough sample of snapshots must have.
var allFeatures = []string{
	"BackendTLSPolicy", "GRPCRoute", "HTTPRoute", "ListenerSet", "ProxySettingsPolicy", "WAFGatewayBindingPolicy",
	"NginxProxy/waf/enabled", "NginxProxy/waf/disabled", "gateway/client-validation",
	"listener/HTTP", "listener/HTTPS", "listener/hostname/exact", "listener/hostname/wildcard",
	"listener/hostname/exact-long", "listener/hostname/wildcard-long",
	"match/path/Exact", "match/path/PathPrefix", "match/path/RegularExpression", "match/method",
	"match/header/Exact", "match/header/RegularExpression", "match/query/Exact", "match/query/RegularExpression",
	"match/grpc/Exact", "match/grpc/RegularExpression",
	"filter/RequestHeaderModifier", "filter/ResponseHeaderModifier", "filter/RequestRedirect", "filter/URLRewrite",
	"filter/RequestMirror", "filter/CORS", "filter/ExtensionRef",
	"grpc-filter/RequestHeaderModifier", "grpc-filter/ResponseHeaderModifier", "grpc-filter/RequestMirror",
	"weight/0", "weight/1000000", "weight/between",
	"security-log/Stderr", "security-log/File", "security-log/Syslog",
	"appProtocol/kubernetes.io/h2c", "appProtocol/kubernetes.io/ws", "appProtocol/https",
}

// TestSnapshotsCoverEveryKind: 300 seeds make every kind of object,
// match, filter, policy and weight the generator knows.
func TestSnapshotsCoverEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(300) {
		for _, f := range snapgen.Features(snapgen.Generate(snapgen.FromSeed(seed), snapgen.Large, controller)) {
			seen[f] = true
		}
	}
	var missing []string
	for _, f := range allFeatures {
		if !seen[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Errorf("300 snapshots have no %s", strings.Join(missing, ", "))
	}
}
