package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/unreadable"
)

// undecodableObjects are a Gateway and routes, one of which has a string
// where its backend's port number belongs: a CRD whose schema does not
// check types (old, loosened) stores it. Another bears the stubs' mark,
// set by its author: it is read as it is.
const undecodableObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: undecodable}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: bad, namespace: undecodable}
spec: {workerConnections: "many"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: undecodable}
spec:
  gatewayClassName: undecodable
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: before, namespace: undecodable}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: undecodable}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: app, port: "eighty"}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: forged
  namespace: undecodable
  annotations: {gatewall.nginx.org/unreadable: "its author set this"}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: after, namespace: undecodable}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
`

// TestUndecodableObjects: an object that does not decode into its Go type
// is refused alone. Without the manager's stubs it failed the decoding of
// its kind's whole list and watch: no HTTPRoute created after it got a
// status, and a manager started then never synced its cache.
func TestUndecodableObjects(t *testing.T) {
	ctx := context.Background()
	loosenSpecSchemas(t)
	class := &gatewayv1.GatewayClass{}
	class.Name = "undecodable"
	class.Spec.ControllerName = manager.DefaultControllerName
	if err := env.Client.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, class) })
	var created []*unstructured.Unstructured
	for _, doc := range strings.Split(undecodableObjects, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s: %v", u.GetName(), err)
		}
		created = append(created, u)
	}
	t.Cleanup(func() {
		for i := len(created) - 1; i > 0; i-- { // not the Namespace: no namespace controller runs
			_ = env.Client.Delete(ctx, created[i])
		}
	})

	// The running manager (its watch): the routes before and after the bad
	// one are accepted, the bad one is refused with the reason.
	accepted := func(name, reason, msg string) func() error {
		return func() error {
			r := &gatewayv1.HTTPRoute{}
			c := unreadable.StubConfig(env.Config, scheme.New())
			cl, err := client.New(c, client.Options{Scheme: scheme.New()})
			if err != nil {
				return err
			}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: "undecodable", Name: name}, r); err != nil {
				return err
			}
			if len(r.Status.Parents) != 1 {
				return fmt.Errorf("route %s has %d parent statuses", name, len(r.Status.Parents))
			}
			for _, cond := range r.Status.Parents[0].Conditions {
				if cond.Type == "Accepted" && cond.Reason == reason && strings.Contains(cond.Message, msg) {
					return nil
				}
			}
			return fmt.Errorf("route %s: %+v, want Accepted %s containing %q", name, r.Status.Parents[0].Conditions, reason, msg)
		}
	}
	eventually(t, 30*time.Second, accepted("before", "Accepted", ""))
	eventually(t, 30*time.Second, accepted("after", "Accepted", ""))
	eventually(t, 30*time.Second, accepted("forged", "Accepted", ""))
	eventually(t, 30*time.Second, accepted("bad", "UnsupportedValue",
		"HTTPRoute undecodable/bad could not be read (it does not decode: json: cannot unmarshal string into Go struct field"))

	// An NginxProxy (whose status its own reconciler writes) says so too.
	eventually(t, 30*time.Second, func() error {
		np := &v1alpha2.NginxProxy{}
		cl, err := client.New(unreadable.StubConfig(env.Config, scheme.New()), client.Options{Scheme: scheme.New()})
		if err != nil {
			return err
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: "undecodable", Name: "bad"}, np); err != nil {
			return err
		}
		c := meta.FindStatusCondition(np.Status.Conditions, "Accepted")
		want := "NginxProxy undecodable/bad could not be read (it does not decode: json: cannot unmarshal string"
		if c == nil || c.Status != metav1.ConditionFalse || !strings.HasPrefix(c.Message, want) {
			return fmt.Errorf("NginxProxy Accepted condition %+v, want False with %q", c, want)
		}
		return nil
	})

	// A new reader (as a manager starting now lists): the list decodes,
	// with the bad route as its marked stub. Without the stubs it fails.
	list := &gatewayv1.HTTPRouteList{}
	plain, err := client.New(env.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.List(ctx, list, client.InNamespace("undecodable")); err == nil {
		t.Fatal("a plain client lists the routes: the test does not hold an undecodable one")
	}
	stubbed, err := client.New(unreadable.StubConfig(env.Config, scheme.New()), client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := stubbed.List(ctx, list, client.InNamespace("undecodable")); err != nil {
		t.Fatalf("listing through stubs: %v", err)
	}
	marks := map[string]string{}
	for _, r := range list.Items {
		marks[r.Name] = r.Annotations[unreadable.Annotation]
		if r.Name == "bad" && (len(r.Spec.Rules) != 0 || len(r.Spec.ParentRefs) != 1) {
			t.Errorf("the stub of bad has rules %v and parentRefs %v, want its parentRefs only", r.Spec.Rules, r.Spec.ParentRefs)
		}
	}
	if len(marks) != 4 || marks["before"] != "" || marks["after"] != "" || marks["forged"] != "" || !strings.HasPrefix(marks["bad"], "it does not decode: ") {
		t.Errorf("marks by route: %q, want bad's alone", marks)
	}
}
