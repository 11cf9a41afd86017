package manager_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// provController is the controllerName of the provisioning manager of these
// tests; the package's shared manager, which provisions nothing, leaves its
// Gateways alone.
const provController = "gatewall.test/provisioning"

// startProvisioningManager runs a manager with the agent server, so that it
// provisions data planes, until the test ends. TMPDIR names no directory:
// the deployed manager's root filesystem is read-only, so the manager must
// not write temporary files (it used to copy the agent's TLS files there).
// pullSecrets are its --nginx-docker-secret flags.
func startProvisioningManager(t *testing.T, pullSecrets ...string) {
	t.Helper()
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "not-writable"))
	mgr, err := manager.New(env.Config, manager.Options{
		ControllerName:   provController,
		GatewayClassName: "prov",
		Namespace:        manager.DefaultNamespace,
		MetricsAddr:      "0",
		ProbeAddr:        "0",
		Agent: manager.AgentOptions{
			ListenAddress: "127.0.0.1:0",
			ServerAddress: "gatewall-agent.test:8443",
			TLSSecret:     "provisioning-test-agent-tls",
			PullSecrets:   pullSecrets,
		},
	})
	if err != nil {
		t.Fatalf("starting a manager that serves agents with no writable TMPDIR: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// dataPlane returns the data-plane objects named name in ns that exist.
func dataPlane(ns, name string) map[string]client.Object {
	out := map[string]client.Object{}
	for kind, o := range map[string]client.Object{
		"Deployment": &appsv1.Deployment{}, "Service": &corev1.Service{}, "ServiceAccount": &corev1.ServiceAccount{},
		"ConfigMap": &corev1.ConfigMap{}, "Secret": &corev1.Secret{},
	} {
		n := name
		switch kind {
		case "ConfigMap":
			n += "-agent"
		case "Secret":
			n += "-agent-ca"
		}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: n}, o); err == nil {
			out[kind] = o
		}
	}
	return out
}

// wantDataPlane waits until all or none of the data plane exists.
func wantDataPlane(t *testing.T, ns, name string, exists bool) map[string]client.Object {
	t.Helper()
	var got map[string]client.Object
	eventually(t, 15*time.Second, func() error {
		got = dataPlane(ns, name)
		if exists && len(got) != 5 || !exists && len(got) != 0 {
			kinds := make([]string, 0, len(got))
			for k := range got {
				kinds = append(kinds, k)
			}
			return fmt.Errorf("data plane %s/%s: %v exist, want all: %v", ns, name, kinds, exists)
		}
		return nil
	})
	return got
}

func provGateway(ns, name, class string) *gatewayv1.Gateway {
	gw := gateway(ns, name)
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(class)
	return gw
}

func provClass(name, controller string) *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)},
	}
}

func updateGateway(t *testing.T, key types.NamespacedName, change func(*gatewayv1.Gateway)) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		gw, err := getGateway(key)
		if err != nil {
			return err
		}
		change(gw)
		return env.Client.Update(context.Background(), gw)
	})
}

func waitGatewayCondition(t *testing.T, key types.NamespacedName, typ, want, msg string) {
	t.Helper()
	waitGatewayConditionFor(t, 15*time.Second, key, typ, want, msg)
}

// waitGatewayConditionFor is waitGatewayCondition waiting up to timeout.
func waitGatewayConditionFor(t *testing.T, timeout time.Duration, key types.NamespacedName, typ, want, msg string) {
	t.Helper()
	eventually(t, timeout, func() error {
		gw, err := getGateway(key)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(gw.Status.Conditions, typ)
		if got := condition(gw.Status.Conditions, typ); got != want || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("Gateway %s is %s (%v), want %s saying %q", typ, got, c, want, msg)
		}
		return nil
	})
}

func TestProvisioning(t *testing.T) {
	ctx := context.Background()
	registry := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: manager.DefaultNamespace, Name: "prov-registry"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"private-registry.nginx.com":{"auth":"djE="}}}`)}}
	startProvisioningManager(t, registry.Name)
	create(t, registry)
	create(t, provClass("prov", provController), provClass("prov-renamed", provController),
		provClass("prov-other", "example.com/another-controller"))
	ns := namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "gw"}

	// Someone else's Service stands where the data plane's would go.
	theirs := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw-prov", Labels: map[string]string{"app": "theirs"}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "theirs"}, Ports: []corev1.ServicePort{{Name: "web", Port: 9999}}},
	}
	// And a ConfigMap of theirs carries the data plane's label.
	labelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lookalike",
		Labels: map[string]string{provisioner.GatewayNameLabel: "gw"}}}
	create(t, theirs, labelled, provGateway(ns, "gw", "prov"))

	t.Run("an object it does not own is neither taken over nor provisioned around", func(t *testing.T) {
		waitGatewayCondition(t, key, "Programmed", "False/NoResources", "Service "+ns+"/gw-prov exists and is not this Gateway's data plane")
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), svc); err != nil {
			t.Fatal(err)
		}
		if svc.Spec.Selector["app"] != "theirs" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9999 || len(svc.OwnerReferences) != 0 {
			t.Fatalf("their Service was changed: %+v %+v", svc.Spec, svc.OwnerReferences)
		}
		for _, m := range svc.ManagedFields {
			if m.Manager == provisioner.FieldOwner {
				t.Fatalf("Gatewall manages fields of their Service: %+v", m)
			}
		}
		if got := dataPlane(ns, "gw-prov"); len(got) != 1 {
			t.Fatalf("%d data-plane objects exist beside their Service, want none", len(got)-1)
		}
		if err := env.Client.Delete(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		// A spec change reconciles at once (a refusal is also retried every minute).
		updateGateway(t, key, func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Port = 8080 })
		wantDataPlane(t, ns, "gw-prov", true)
	})

	t.Run("a changed or deleted CA Secret is restored", func(t *testing.T) {
		ca := &corev1.Secret{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-prov-agent-ca"}, ca); err != nil {
			t.Fatal(err)
		}
		want := string(ca.Data[provisioner.AgentCAFile])
		ca.Data[provisioner.AgentCAFile] = []byte("tampered")
		if err := env.Client.Update(ctx, ca); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			got := &corev1.Secret{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ca), got); err != nil {
				return err
			}
			if string(got.Data[provisioner.AgentCAFile]) != want {
				return errors.New("the CA Secret keeps its tampered content")
			}
			return nil
		})
		if err := env.Client.Delete(ctx, ca); err != nil {
			t.Fatal(err)
		}
		wantDataPlane(t, ns, "gw-prov", true)
	})

	t.Run("a changed Deployment is restored", func(t *testing.T) {
		// Gatewall remembers what it applied and skips unchanged objects:
		// a change by someone else must still be reverted.
		key := types.NamespacedName{Namespace: ns, Name: "gw-prov"}
		var want int32
		eventually(t, 15*time.Second, func() error {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, key, d); err != nil {
				return err
			}
			want = *d.Spec.Replicas
			d.Spec.Replicas = ptr.To(want + 4)
			return env.Client.Update(ctx, d)
		})
		eventually(t, 15*time.Second, func() error {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, key, d); err != nil {
				return err
			}
			if *d.Spec.Replicas != want {
				return fmt.Errorf("the data-plane Deployment keeps %d replicas, want %d", *d.Spec.Replicas, want)
			}
			return nil
		})
	})

	t.Run("the installation's image pull Secret is copied for the pods and kept current", func(t *testing.T) {
		copyKey := types.NamespacedName{Namespace: ns, Name: "gw-prov-pull-prov-registry"}
		wantCopy := func(auth string) {
			t.Helper()
			eventually(t, 15*time.Second, func() error {
				c := &corev1.Secret{}
				if err := env.Client.Get(ctx, copyKey, c); err != nil {
					return err
				}
				if c.Type != corev1.SecretTypeDockerConfigJson || !strings.Contains(string(c.Data[corev1.DockerConfigJsonKey]), auth) {
					return fmt.Errorf("copy %s: type %s, %s", copyKey, c.Type, c.Data[corev1.DockerConfigJsonKey])
				}
				d := &appsv1.Deployment{}
				if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-prov"}, d); err != nil {
					return err
				}
				if ps := d.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != copyKey.Name {
					return fmt.Errorf("the pods' imagePullSecrets are %+v", ps)
				}
				return nil
			})
		}
		wantCopy(`"auth":"djE="`)
		registry.Data[corev1.DockerConfigJsonKey] = []byte(`{"auths":{"private-registry.nginx.com":{"auth":"djI="}}}`)
		if err := env.Client.Update(ctx, registry); err != nil {
			t.Fatal(err)
		}
		wantCopy(`"auth":"djI="`)
	})

	t.Run("an invalid Gateway keeps its data plane", func(t *testing.T) {
		before := wantDataPlane(t, ns, "gw-prov", true)
		updateGateway(t, key, func(gw *gatewayv1.Gateway) {
			gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
				Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "missing"}}
		})
		waitGatewayCondition(t, key, "Accepted", "False/InvalidParameters", "missing")
		time.Sleep(time.Second) // let any deletion happen
		after := wantDataPlane(t, ns, "gw-prov", true)
		for kind, o := range before {
			if after[kind].GetUID() != o.GetUID() || after[kind].GetDeletionTimestamp() != nil {
				t.Errorf("the %s of the invalid Gateway was deleted or replaced", kind)
			}
		}
		updateGateway(t, key, func(gw *gatewayv1.Gateway) { gw.Spec.Infrastructure = nil })
		waitGatewayCondition(t, key, "Accepted", "True/Accepted", "")
		if got := dataPlane(ns, "gw-prov")["Deployment"]; got == nil || got.GetUID() != before["Deployment"].GetUID() {
			t.Error("the Deployment was replaced when the Gateway became valid again")
		}
	})

	t.Run("a Gateway moved to another class of Gatewall's loses its former data plane", func(t *testing.T) {
		updateGateway(t, key, func(gw *gatewayv1.Gateway) { gw.Spec.GatewayClassName = "prov-renamed" })
		wantDataPlane(t, ns, "gw-prov-renamed", true)
		wantDataPlane(t, ns, "gw-prov", false)
	})

	t.Run("a Gateway moved to another controller's class loses its data plane", func(t *testing.T) {
		updateGateway(t, key, func(gw *gatewayv1.Gateway) { gw.Spec.GatewayClassName = "prov-other" })
		wantDataPlane(t, ns, "gw-prov-renamed", false)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(labelled), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("their ConfigMap with the data plane's label: %v", err)
		}
	})

	t.Run("a Gateway whose class is deleted loses its data plane", func(t *testing.T) {
		create(t, provClass("prov-doomed", provController), provGateway(ns, "gw2", "prov-doomed"))
		wantDataPlane(t, ns, "gw2-prov-doomed", true)
		if err := env.Client.Delete(ctx, provClass("prov-doomed", provController)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error {
			err := env.Client.Get(ctx, types.NamespacedName{Name: "prov-doomed"}, &gatewayv1.GatewayClass{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("class still there (finalizers?): %v", err)
			}
			return nil
		})
		wantDataPlane(t, ns, "gw2-prov-doomed", false)
	})
}

// TestProgrammedSaysWhyPodsDoNotServe: a Gateway whose data-plane pod the
// scheduler cannot place says so in its Programmed condition, with the
// scheduler's own message, and so does a pod whose image cannot be
// pulled: kubectl get gateway alone tells the user what to do. (envtest
// runs no scheduler or kubelet: the pods' states are written as theirs.)
func TestProgrammedSaysWhyPodsDoNotServe(t *testing.T) {
	ctx := context.Background()
	startProvisioningManager(t)
	if err := env.Client.Create(ctx, provClass("prov", provController)); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "gw"}
	create(t, provGateway(ns, "gw", "prov"))
	dep := wantDataPlane(t, ns, "gw-prov", true)["Deployment"].(*appsv1.Deployment)
	waitGatewayCondition(t, key, "Programmed", "False/Pending", "")

	newPod := func(name string, st corev1.PodStatus) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: dep.Spec.Template.Labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "example.com/nginx:1"}}}}
		create(t, p)
		p.Status = st
		if err := env.Client.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	newPod("unschedulable", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 Insufficient cpu."}}})
	// A pod's state triggers nothing the manager watches: the Gateway's
	// status is written again every 15 s while its data plane does not serve.
	waitGatewayConditionFor(t, 40*time.Second, key, "Programmed", "False/Pending", "pod unschedulable: cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.")

	newPod("no-image", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "nginx", Image: "example.com/nginx:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}})
	waitGatewayConditionFor(t, 40*time.Second, key, "Programmed", "False/Pending", "pod no-image: container nginx cannot pull image example.com/nginx:1")

	// The event says it too.
	eventually(t, 20*time.Second, func() error {
		events := &eventsv1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "DataPlaneNotReady" && strings.Contains(e.Note, "Insufficient cpu") {
				return nil
			}
		}
		return fmt.Errorf("no DataPlaneNotReady event naming the scheduler's reason among %d events", len(events.Items))
	})
}
