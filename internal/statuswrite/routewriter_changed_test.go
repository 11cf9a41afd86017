package statuswrite

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/scheme"
)

// TestSetChangedHandsWhatWouldChange: a write is skipped only when the
// route shows it and no write of the route waits or is being made (an
// older one would overwrite it). The writer is not started, so what it
// was handed stays pending to look at.
func TestSetChangedHandsWhatWouldChange(t *testing.T) {
	const ctrl = "gateway.nginx.org/nginx-gateway-controller"
	entry := func(gw, reason, by string) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{
			ParentRef:      gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")), Name: gatewayv1.ObjectName(gw)},
			ControllerName: gatewayv1.GatewayController(by),
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: 1,
				LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0))}},
		}
	}
	gw := types.NamespacedName{Namespace: "ns", Name: "gw"}
	owner := ParentOwner{ControllerName: ctrl, Gateway: gw, Sets: map[types.NamespacedName]bool{}}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}}
	id := RouteRef(route)
	w := NewRouteWriter(nil, logr.Discard())
	list := func(ps ...gatewayv1.RouteParentStatus) []gatewayv1.RouteParentStatus { return ps }
	x, y := entry("gw", "X", ctrl), entry("gw", "Y", ctrl)
	other, otherGateway := entry("gw", "Theirs", "example.com/other"), entry("other", "Z", ctrl)
	// handed is the reason of the write pending for the route, "" for none;
	// taking it plays the writer making the write.
	handed := func() string {
		defer delete(w.pending, id)
		wr, ok := w.pending[id][owner.key()]
		switch {
		case !ok:
			return ""
		case len(wr.Ours) == 0:
			return "clear"
		}
		return wr.Ours[0].Conditions[0].Reason
	}
	steps := []struct {
		what string
		set  func()
		want string
	}{
		{"the route shows the write", func() { w.SetChanged(route, owner, list(x), list(x)) }, ""},
		{"the route shows it among others' entries", func() { w.SetChanged(route, owner, list(x), list(other, x, otherGateway)) }, ""},
		{"the route shows another status", func() { w.SetChanged(route, owner, list(x), list(y)) }, "X"},
		{"the route shows none of ours", func() { w.SetChanged(route, owner, list(x), list(other)) }, "X"},
		{"the route shows more of ours", func() { w.SetChanged(route, owner, list(x), list(x, y)) }, "X"},
		{"the route shows less of ours", func() { w.SetChanged(route, owner, list(y, x), list(y)) }, "Y"},
		{"a clear, the route shows none", func() { w.SetChanged(route, owner, nil, list(other)) }, ""},
		{"a clear, the route shows ours", func() { w.SetChanged(route, owner, nil, list(x)) }, "clear"},
		{"a newer write waits", func() { w.Set(route, owner, list(y)); w.SetChanged(route, owner, list(x), list(x)) }, "X"},
	}
	for _, s := range steps {
		s.set()
		if got := handed(); got != s.want {
			t.Errorf("%s: handed %q, want %q", s.what, got, s.want)
		}
	}

	// While a write of the route is being made (its read of the route
	// held here), a write the route shows is handed all the same.
	reading, release := make(chan struct{}), make(chan struct{})
	w.client = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(route).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			close(reading)
			<-release
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	w.Set(route, owner, list(y))
	done := make(chan error, 1)
	go func() { done <- w.write(context.Background(), id) }()
	<-reading
	w.SetChanged(route, owner, list(x), list(x))
	if got := handed(); got != "X" {
		t.Errorf("a write is being made: handed %q, want %q", got, "X")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.SetChanged(route, owner, list(y), list(y))
	if got := handed(); got != "" {
		t.Errorf("the write was made: handed %q, want none", got)
	}
}

// TestSameParentComparesEveryField: sameParent compares parent statuses
// field by field; a field added to the API types must be compared too.
// Each field changed on its own makes a different status.
func TestSameParentComparesEveryField(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[gatewayv1.RouteParentStatus](): 3,
		reflect.TypeFor[gatewayv1.ParentReference]():   6,
		reflect.TypeFor[metav1.Condition]():            6,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, sameParent compares %d: compare the new ones", typ, typ.NumField(), n)
		}
	}
	base := func() gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{
			ParentRef: gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group("g")), Kind: ptr.To(gatewayv1.Kind("k")), Namespace: ptr.To(gatewayv1.Namespace("n")),
				Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("s")), Port: ptr.To(gatewayv1.PortNumber(80))},
			ControllerName: "c",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "R", Message: "M", ObservedGeneration: 1,
				LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0))}},
		}
	}
	if !sameParent(base(), base()) {
		t.Fatal("two equal parent statuses differ")
	}
	for what, change := range map[string]func(*gatewayv1.RouteParentStatus){
		"group":              func(p *gatewayv1.RouteParentStatus) { p.ParentRef.Group = nil },
		"kind":               func(p *gatewayv1.RouteParentStatus) { p.ParentRef.Kind = ptr.To(gatewayv1.Kind("other")) },
		"namespace":          func(p *gatewayv1.RouteParentStatus) { p.ParentRef.Namespace = ptr.To(gatewayv1.Namespace("other")) },
		"name":               func(p *gatewayv1.RouteParentStatus) { p.ParentRef.Name = "other" },
		"section":            func(p *gatewayv1.RouteParentStatus) { p.ParentRef.SectionName = nil },
		"port":               func(p *gatewayv1.RouteParentStatus) { p.ParentRef.Port = ptr.To(gatewayv1.PortNumber(81)) },
		"controller":         func(p *gatewayv1.RouteParentStatus) { p.ControllerName = "other" },
		"conditions":         func(p *gatewayv1.RouteParentStatus) { p.Conditions = append(p.Conditions, p.Conditions[0]) },
		"type":               func(p *gatewayv1.RouteParentStatus) { p.Conditions[0].Type = "Other" },
		"status":             func(p *gatewayv1.RouteParentStatus) { p.Conditions[0].Status = metav1.ConditionFalse },
		"reason":             func(p *gatewayv1.RouteParentStatus) { p.Conditions[0].Reason = "Other" },
		"message":            func(p *gatewayv1.RouteParentStatus) { p.Conditions[0].Message = "Other" },
		"observedGeneration": func(p *gatewayv1.RouteParentStatus) { p.Conditions[0].ObservedGeneration = 2 },
		"lastTransitionTime": func(p *gatewayv1.RouteParentStatus) {
			p.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(1_700_000_001, 0))
		},
	} {
		p := base()
		change(&p)
		if sameParent(base(), p) || sameParent(p, base()) {
			t.Errorf("a parent status with another %s is the same", what)
		}
	}
}
