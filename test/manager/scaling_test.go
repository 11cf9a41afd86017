package manager_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestProvisioningScaling: a Gateway's NginxProxy with autoscaling and a
// disruption budget gets a HorizontalPodAutoscaler and a
// PodDisruptionBudget owned by the Gateway; the Deployment's replicas are
// the autoscaler's (a reconcile does not reset them); changes to the
// NginxProxy update them, turning them off deletes them, and so does the
// Gateway leaving the installation. (envtest runs no garbage collector nor
// autoscaler: the owner references are what deletes them with the
// Gateway, and the test scales the Deployment as the autoscaler does,
// through its scale subresource.)
func TestProvisioningScaling(t *testing.T) {
	ctx := context.Background()
	startProvisioningManager(t)
	create(t, provClass("prov-scaling", provController), provClass("prov-scaling-other", "example.com/another-controller"))
	ns := namespace(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scaling"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Replicas:            ptr.To(int32(2)),
			Autoscaling:         &v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr.To(int32(2)), MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr.To(int32(70))},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
		}},
	}}
	gw := provGateway(ns, "gw", "prov-scaling")
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: np.Name}}
	create(t, np, gw)
	gwKey := client.ObjectKeyFromObject(gw)
	key := types.NamespacedName{Namespace: ns, Name: "gw-prov-scaling"}
	wantDataPlane(t, ns, key.Name, true)
	if err := env.Client.Get(ctx, gwKey, gw); err != nil {
		t.Fatal(err)
	}

	hpa := func() (*autoscalingv2.HorizontalPodAutoscaler, error) {
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		return h, env.Client.Get(ctx, key, h)
	}
	pdb := func() (*policyv1.PodDisruptionBudget, error) {
		b := &policyv1.PodDisruptionBudget{}
		return b, env.Client.Get(ctx, key, b)
	}
	owned := func(o client.Object) error {
		if ref := metav1.GetControllerOf(o); ref == nil || ref.UID != gw.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			return fmt.Errorf("%s is not owned by the Gateway: %+v", o.GetName(), o.GetOwnerReferences())
		}
		return nil
	}
	updateNP := func(change func(*v1alpha2.DeploymentSpec)) {
		t.Helper()
		eventually(t, 10*time.Second, func() error {
			cur := &v1alpha2.NginxProxy{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), cur); err != nil {
				return err
			}
			change(cur.Spec.Kubernetes.Deployment)
			return env.Client.Update(ctx, cur)
		})
	}

	t.Run("the autoscaler and the disruption budget are made, owned by the Gateway", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			h, err := hpa()
			if err != nil {
				return err
			}
			if err := owned(h); err != nil {
				return err
			}
			if r := h.Spec.ScaleTargetRef; r.Kind != "Deployment" || r.Name != key.Name || ptr.Deref(h.Spec.MinReplicas, 0) != 2 || h.Spec.MaxReplicas != 4 {
				return fmt.Errorf("autoscaler spec %+v", h.Spec)
			}
			b, err := pdb()
			if err != nil {
				return err
			}
			if err := owned(b); err != nil {
				return err
			}
			if b.Spec.MinAvailable == nil || b.Spec.MinAvailable.IntValue() != 1 || b.Spec.Selector.MatchLabels[provisioner.GatewayNameLabel] != "gw" {
				return fmt.Errorf("disruption budget spec %+v", b.Spec)
			}
			return nil
		})
	})

	t.Run("the Deployment's replicas are the autoscaler's", func(t *testing.T) {
		eventually(t, 10*time.Second, func() error {
			scale := &autoscalingv1.Scale{}
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}
			if err := env.Client.SubResource("scale").Get(ctx, d, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = 3
			return env.Client.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(scale))
		})
		// A change of the Gateway re-applies the Deployment.
		updateGateway(t, gwKey, func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Port = 8080 })
		eventually(t, 15*time.Second, func() error {
			svc, ok := dataPlane(ns, key.Name)["Service"].(*corev1.Service)
			if !ok || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
				return fmt.Errorf("the Service does not follow the listener to port 8080 yet")
			}
			return nil
		})
		time.Sleep(time.Second) // let a reconcile that would reset them happen
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(d.Spec.Replicas, 0); got != 3 {
			t.Errorf("the Deployment has %d replicas after a reconcile; the autoscaler chose 3", got)
		}
		for _, m := range d.ManagedFields {
			if m.Manager == provisioner.FieldOwner && m.FieldsV1 != nil && containsField(m.FieldsV1.GetRawBytes(), `"f:replicas"`) {
				t.Errorf("Gatewall manages the Deployment's replicas beside the autoscaler: %s", m.FieldsV1.GetRawString())
			}
		}
	})

	t.Run("a changed NginxProxy updates them", func(t *testing.T) {
		updateNP(func(d *v1alpha2.DeploymentSpec) {
			d.Autoscaling.MaxReplicas = 6
			d.PodDisruptionBudget = &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%"))}
		})
		eventually(t, 15*time.Second, func() error {
			h, err := hpa()
			if err != nil {
				return err
			}
			b, err := pdb()
			if err != nil {
				return err
			}
			if h.Spec.MaxReplicas != 6 || b.Spec.MinAvailable != nil || b.Spec.MaxUnavailable == nil || b.Spec.MaxUnavailable.String() != "50%" {
				return fmt.Errorf("autoscaler max %d, budget %+v", h.Spec.MaxReplicas, b.Spec)
			}
			return nil
		})
	})

	t.Run("turned off, they are deleted and replicas apply again", func(t *testing.T) {
		updateNP(func(d *v1alpha2.DeploymentSpec) {
			d.Autoscaling.Enable = false
			d.PodDisruptionBudget = nil
		})
		eventually(t, 15*time.Second, func() error {
			if _, err := hpa(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the autoscaler: %v", err)
			}
			if _, err := pdb(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the disruption budget: %v", err)
			}
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, key, d); err != nil {
				return err
			}
			if got := ptr.Deref(d.Spec.Replicas, 0); got != 2 {
				return fmt.Errorf("the Deployment has %d replicas, want the NginxProxy's 2", got)
			}
			return nil
		})
	})

	t.Run("turned on, the autoscaler takes the replicas as they are", func(t *testing.T) {
		// Gatewall applied the NginxProxy's 2 replicas; server-side apply
		// would drop the field it stops applying, and the Deployment fall
		// to 1 replica until the autoscaler's next sync.
		updateNP(func(d *v1alpha2.DeploymentSpec) {
			d.Autoscaling.Enable = true
			d.PodDisruptionBudget = &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}
		})
		eventually(t, 15*time.Second, func() error {
			if _, err := hpa(); err != nil {
				return err
			}
			_, err := pdb()
			return err
		})
		time.Sleep(time.Second) // the Deployment is applied before the autoscaler
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(d.Spec.Replicas, 0); got != 2 {
			t.Errorf("the Deployment has %d replicas once autoscaled; it had 2", got)
		}
		for _, m := range d.ManagedFields {
			if m.Manager == provisioner.FieldOwner && m.FieldsV1 != nil && containsField(m.FieldsV1.GetRawBytes(), `"f:replicas"`) {
				t.Errorf("Gatewall still applies the replicas: %s", m.FieldsV1.GetRawString())
			}
		}
	})

	t.Run("a DaemonSet replaces the Deployment, its autoscaler and budget, and back", func(t *testing.T) {
		setKind := func(daemon bool) {
			t.Helper()
			eventually(t, 10*time.Second, func() error {
				cur := &v1alpha2.NginxProxy{}
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), cur); err != nil {
					return err
				}
				if daemon {
					cur.Spec.Kubernetes = &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}
				} else {
					cur.Spec.Kubernetes = np.Spec.Kubernetes.DeepCopy()
				}
				return env.Client.Update(ctx, cur)
			})
		}
		wantKind := func(daemon bool) {
			t.Helper()
			eventually(t, 15*time.Second, func() error {
				ds := &appsv1.DaemonSet{}
				errDS := env.Client.Get(ctx, key, ds)
				errDep := env.Client.Get(ctx, key, &appsv1.Deployment{})
				_, errHPA := hpa()
				_, errPDB := pdb()
				if daemon {
					if errDS != nil {
						return fmt.Errorf("the DaemonSet: %v", errDS)
					}
					if err := owned(ds); err != nil {
						return err
					}
					for what, err := range map[string]error{"Deployment": errDep, "autoscaler": errHPA, "budget": errPDB} {
						if !apierrors.IsNotFound(err) {
							return fmt.Errorf("the %s beside the DaemonSet: %v", what, err)
						}
					}
					return nil
				}
				if !apierrors.IsNotFound(errDS) {
					return fmt.Errorf("the DaemonSet beside the Deployment: %v", errDS)
				}
				for what, err := range map[string]error{"Deployment": errDep, "autoscaler": errHPA, "budget": errPDB} {
					if err != nil {
						return fmt.Errorf("the %s: %v", what, err)
					}
				}
				return nil
			})
		}
		setKind(true)
		wantKind(true)
		setKind(false)
		wantKind(false)
	})

	t.Run("a Gateway that leaves the installation loses them", func(t *testing.T) {
		updateGateway(t, gwKey, func(gw *gatewayv1.Gateway) { gw.Spec.GatewayClassName = "prov-scaling-other" })
		eventually(t, 15*time.Second, func() error {
			if _, err := hpa(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the autoscaler: %v", err)
			}
			if _, err := pdb(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the disruption budget: %v", err)
			}
			return nil
		})
	})
}

// containsField says whether a managed-fields entry names field f.
func containsField(raw []byte, f string) bool { return bytes.Contains(raw, []byte(f)) }

// TestProgrammedSaysWhyDaemonSetPodsDoNotServe: a DaemonSet data plane's
// pods are read as a Deployment's are when they do not serve: the
// Gateway's Programmed condition gives the scheduler's reason.
func TestProgrammedSaysWhyDaemonSetPodsDoNotServe(t *testing.T) {
	ctx := context.Background()
	startProvisioningManager(t)
	if err := env.Client.Create(ctx, provClass("prov-daemonset", provController)); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "daemonset"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}}}
	gw := provGateway(ns, "gw", "prov-daemonset")
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: np.Name}}
	create(t, np, gw)
	ds := &appsv1.DaemonSet{}
	eventually(t, 15*time.Second, func() error {
		return env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-prov-daemonset"}, ds)
	})
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unschedulable", Labels: ds.Spec.Template.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "example.com/nginx:1"}}}}
	create(t, p)
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 node(s) had untolerated taint."}}}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitGatewayConditionFor(t, 40*time.Second, client.ObjectKeyFromObject(gw), "Programmed", "False/Pending",
		"pod unschedulable: cannot be scheduled: 0/1 nodes are available: 1 node(s) had untolerated taint.")
}
