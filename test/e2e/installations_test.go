package e2e

import (
	"cmp"
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestInstallationsSideBySide: two more Gatewall installations, each for
// its own controllerName and GatewayClass, run beside config/default's: one
// in a namespace of its own, installed with the Helm chart (charts/gatewall,
// whose GatewayClass and NginxProxy it serves), one in gatewall-system
// itself under a name prefix, as README's overlay makes it. Each Gateway is
// served by its own installation's data plane, and none of them fails a
// request while the others start and run: no installation deletes,
// rewrites or serves another's data plane (the second one used to delete
// the first's every few seconds), and each Gateway's status comes from its
// controller.
func TestInstallationsSideBySide(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-installations")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)

	first := classedGateway(ns, "first", "nginx")
	create(t, first, httpRoute(ns, "first", "first", "first.example.com", "/", "echo"))
	loads := map[string]*testenv.Load{}
	addr := programmedAddress(t, client.ObjectKeyFromObject(first), 90*time.Second)
	serves(t, addr, "first.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	loads["first"] = testenv.StartLoad(t, addr, "first.example.com", "/")

	others := map[string]localrun.Deployment{
		// The chart makes the GatewayClass, naming its NginxProxy.
		"second": {Installation: localrun.Installation{Namespace: "gatewall-second", NamePrefix: "second-", Instance: "second",
			ControllerName: "example.com/gatewall-second", GatewayClass: "second"}, With: localrun.Helm},
		"third": {Installation: localrun.Installation{NamePrefix: "third-", Instance: "third",
			ControllerName: "example.com/gatewall-third", GatewayClass: "third"}},
	}
	controllers := map[string]string{"first": manager.DefaultControllerName}
	for _, name := range []string{"second", "third"} {
		d := others[name]
		d.Args = testenv.TestArgs()
		inst := d.Installation
		controllers[name] = inst.ControllerName
		t.Cleanup(func() {
			if err := rt.Undeploy(context.Background(), d); err != nil {
				t.Error(err)
			}
		})
		started := time.Now()
		if err := rt.Deploy(ctx, d); err != nil {
			t.Fatalf("installing %s: %v", name, err)
		}
		t.Logf("installation %s (%s, with %s) leads after %s", name, inst.ControllerName, cmp.Or(string(d.With), "kustomize"),
			time.Since(started).Round(time.Millisecond))
		if d.With == localrun.Kustomize {
			class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: inst.GatewayClass},
				Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(inst.ControllerName)}}
			create(t, class)
			t.Cleanup(func() { _ = rt.Client.Delete(context.Background(), class) })
		} else {
			chartClass(t, inst)
		}
		gw := classedGateway(ns, name, inst.GatewayClass)
		host := name + ".example.com"
		create(t, gw, httpRoute(ns, name, name, host, "/", "echo"))
		addr := programmedAddress(t, client.ObjectKeyFromObject(gw), 90*time.Second)
		serves(t, addr, host, "/", 200, `"pod": "echo-`, 60*time.Second)
		loads[name] = testenv.StartLoad(t, addr, host, "/")
	}

	// Each data plane is its own installation's, and stays the same
	// Deployment while every installation reconciles and resyncs.
	uids := map[string]types.UID{}
	for name, controller := range controllers {
		uids[name] = dataPlaneOf(t, ns, name, controller).UID
	}
	time.Sleep(20 * time.Second)
	for name, controller := range controllers {
		if uid := dataPlaneOf(t, ns, name, controller).UID; uid != uids[name] {
			t.Errorf("Gateway %s's data plane was made again (UID %s, was %s)", name, uid, uids[name])
		}
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, gw); err != nil {
			t.Fatal(err)
		}
		if c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed"); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("Gateway %s: Programmed %+v", name, c)
		}
	}
	// Every installation still reconciles its own Gateway (one that
	// replaced another's RBAC would have stopped it).
	for name := range controllers {
		host := "new-" + name + ".example.com"
		create(t, httpRoute(ns, "new-"+name, name, host, "/", "echo"))
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, gw); err != nil {
			t.Fatal(err)
		}
		serves(t, gw.Status.Addresses[0].Value, host, "/", 200, `"pod": "echo-`, 60*time.Second)
	}
	for _, name := range []string{"first", "second", "third"} {
		sent, failed := loads[name].Stop()
		t.Logf("Gateway %s (%s): %d requests, %d failed", name, controllers[name], sent, failed)
		if failed != 0 {
			t.Errorf("%d of %d requests to Gateway %s failed while other installations ran", failed, sent, name)
		}
	}
}

// classedGateway is a Gateway of class with one HTTP listener on port 80.
func classedGateway(ns, name, class string) *gatewayv1.Gateway {
	gw := gateway(ns, name)
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(class)
	return gw
}

// dataPlaneOf is the data-plane Deployment of Gateway ns/name, which must
// say it was made by controller's installation.
func dataPlaneOf(t *testing.T, ns, name, controller string) *appsv1.Deployment {
	t.Helper()
	gw := &gatewayv1.Gateway{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, gw); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: provisioner.Name(gw)}, d); err != nil {
		t.Fatalf("Gateway %s's data plane: %v", name, err)
	}
	if got := d.Annotations[provisioner.ControllerAnnotation]; got != controller {
		t.Errorf("Gateway %s's data plane was made by %q, want %q", name, got, controller)
	}
	return d
}

// chartClass checks the GatewayClass the chart made for inst: it names the
// NginxProxy the chart made beside the manager, and its controller accepted
// it with that NginxProxy.
func chartClass(t *testing.T, inst localrun.Installation) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		class := &gatewayv1.GatewayClass{}
		err := rt.Client.Get(context.Background(), types.NamespacedName{Name: inst.GatewayClass}, class)
		var accepted *metav1.Condition
		if err == nil {
			if ref := class.Spec.ParametersRef; ref == nil || ref.Kind != "NginxProxy" || ref.Namespace == nil || string(*ref.Namespace) != inst.Namespace {
				t.Fatalf("the chart's GatewayClass %s names %+v, want an NginxProxy in %s", inst.GatewayClass, ref, inst.Namespace)
			}
			accepted = meta.FindStatusCondition(class.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
			if accepted != nil && accepted.Status == metav1.ConditionTrue && accepted.ObservedGeneration == class.Generation {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chart's GatewayClass %s is not accepted after a minute (%v): %+v", inst.GatewayClass, err, accepted)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
