package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestDaemonSetAutoscalingDisruption: on the local runtime, a Gateway
// whose NginxProxy asks for a DaemonSet serves traffic from the DaemonSet's
// pod (one per node: the runtime's one node), and a Gateway whose
// NginxProxy asks for autoscaling and a disruption budget has its
// HorizontalPodAutoscaler and PodDisruptionBudget beside a Deployment that
// serves: the admission policies and RBAC of config/ let the manager make
// them.
func TestDaemonSetAutoscalingDisruption(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-scaling")
	gatewayClass(t)
	withNP := func(name string, k v1alpha2.KubernetesSpec) *gatewayv1.Gateway {
		create(t, &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha2.NginxProxySpec{Kubernetes: &k}})
		g := gateway(ns, name)
		g.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
			Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: name}}
		return g
	}
	create(t, withNP("ds", v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}),
		withNP("hpa", v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Autoscaling:         &v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr.To(int32(1)), MaxReplicas: 2, TargetCPUUtilizationPercentage: ptr.To(int32(80))},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		}}))
	create(t, echo(ns, "echo", 1)...)
	create(t, httpRoute(ns, "ds", "ds", "ds.example.com", "/", "echo"), httpRoute(ns, "hpa", "hpa", "hpa.example.com", "/", "echo"))

	t.Run("a DaemonSet data plane serves", func(t *testing.T) {
		addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "ds"}, 120*time.Second)
		serves(t, addr, "ds.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
		d := &appsv1.DaemonSet{}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ds-nginx"}, d); err != nil {
			t.Fatal(err)
		}
		if d.Status.NumberReady != 1 {
			t.Errorf("DaemonSet status %+v; want one ready pod, on the runtime's node", d.Status)
		}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ds-nginx"}, &appsv1.Deployment{}); err == nil {
			t.Error("a Deployment beside the DaemonSet")
		}
	})
	t.Run("an autoscaled Deployment with a disruption budget serves", func(t *testing.T) {
		addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "hpa"}, 120*time.Second)
		serves(t, addr, "hpa.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
		key := types.NamespacedName{Namespace: ns, Name: "hpa-nginx"}
		eventually(t, 30*time.Second, func() error {
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			if err := rt.Client.Get(ctx, key, h); err != nil {
				return err
			}
			if h.Spec.ScaleTargetRef.Name != key.Name || h.Spec.MaxReplicas != 2 {
				return fmt.Errorf("autoscaler spec %+v", h.Spec)
			}
			b := &policyv1.PodDisruptionBudget{}
			if err := rt.Client.Get(ctx, key, b); err != nil {
				return err
			}
			// The disruption controller counts the budget's pods: it
			// selects the data plane's.
			if b.Status.ExpectedPods != 1 || b.Spec.Selector.MatchLabels[provisioner.GatewayNameLabel] != "hpa" {
				return fmt.Errorf("disruption budget %+v status %+v; want the data plane's one pod", b.Spec, b.Status)
			}
			return nil
		})
	})
}
