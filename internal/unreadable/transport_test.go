package unreadable

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/scheme"
)

// routeList is a JSON HTTPRouteList of n routes, as the API server sends
// it; bad of them have a string where the backend's port belongs.
func routeList(t testing.TB, n, bad int) []byte {
	t.Helper()
	items := make([]string, 0, n)
	for i := range n {
		port := "80"
		if i < bad {
			port = `"eighty"`
		}
		items = append(items, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",`+
			`"metadata":{"name":"r%d","namespace":"default","uid":"u%d","resourceVersion":"%d","generation":1},`+
			`"spec":{"parentRefs":[{"name":"gw"}],"hostnames":["r%d.example.com"],`+
			`"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"name":"app","port":%s}]}]},`+
			`"status":{"parents":[]}}`, i, i, i+1, i, port))
	}
	return []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRouteList","metadata":{"resourceVersion":"9"},"items":[` +
		strings.Join(items, ",") + `]}`)
}

// TestStubTransportDocument: a list with an undecodable route decodes once
// checked, the route replaced by its marked stub (parentRefs, uid and
// resourceVersion kept); a list without one is passed through unchanged.
func TestStubTransportDocument(t *testing.T) {
	st := wrapStubs(scheme.New())(nil).(*stubTransport)
	good := routeList(t, 3, 0)
	if got := st.document(good); string(got) != string(good) {
		t.Errorf("a decodable list changed:\n%s", got)
	}
	var raw gatewayv1.HTTPRouteList
	if err := json.Unmarshal(routeList(t, 3, 1), &raw); err == nil {
		t.Fatal("the list with a bad route decodes: the test holds no undecodable route")
	}
	var list gatewayv1.HTTPRouteList
	if err := json.Unmarshal(st.document(routeList(t, 3, 1)), &list); err != nil {
		t.Fatalf("the checked list does not decode: %v", err)
	}
	r := list.Items[0]
	if !strings.HasPrefix(r.Annotations[Annotation], "it does not decode: json: cannot unmarshal string") ||
		r.UID != "u0" || r.ResourceVersion != "1" || len(r.Spec.ParentRefs) != 1 || len(r.Spec.Rules) != 0 {
		t.Errorf("stub: %+v", r)
	}
	for _, r := range list.Items[1:] {
		if _, marked := r.Annotations[Annotation]; marked || len(r.Spec.Rules) != 1 {
			t.Errorf("decodable route %s changed: %+v", r.Name, r)
		}
	}
}

// BenchmarkStubTransportList is the cost of checking a list of 5,000
// routes (all decodable), which a manager pays once per list.
func BenchmarkStubTransportList(b *testing.B) {
	st := wrapStubs(scheme.New())(nil).(*stubTransport)
	data := routeList(b, 5000, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st.document(data)
	}
}
