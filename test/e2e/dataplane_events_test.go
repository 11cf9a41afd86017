package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestDataPlaneNotReadyEvent: a Gateway whose data-plane pods cannot be
// created (a ResourceQuota of no pods in its namespace) gets a
// DataPlaneNotReady event saying why, from its Deployment's conditions.
func TestDataPlaneNotReadyEvent(t *testing.T) {
	ns := namespace(t, "e2e-dp-quota")
	gatewayClass(t)
	create(t, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}})
	create(t, gateway(ns, "gw"))
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	eventually(t, 90*time.Second, func() error {
		evs, err := testenv.EventsAbout(rt.Client, gw, "DataPlaneNotReady")
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, "cannot create pods") && strings.Contains(e.Note, "exceeded quota") {
				t.Logf("event: %s", e.Note)
				return nil
			}
		}
		return fmt.Errorf("no DataPlaneNotReady event naming the quota: %+v", evs)
	})
}

// TestProgrammedNamesTheSchedulersReason: a Gateway whose data-plane pod
// the real scheduler cannot place (its NginxProxy asks more CPU than the
// node has) says why in its Programmed condition, with the scheduler's own
// words, and in a DataPlaneNotReady event: kubectl get gateway alone lets
// the user act.
func TestProgrammedNamesTheSchedulersReason(t *testing.T) {
	ns := namespace(t, "e2e-dp-unschedulable")
	gatewayClass(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "too-big"},
		Spec: v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Container: &v1alpha2.ContainerSpec{Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}}}}}}}
	g := gateway(ns, "gw")
	g.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: np.Name}}
	create(t, np, g)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	eventually(t, 90*time.Second, func() error {
		got := &gatewayv1.Gateway{}
		if err := rt.Client.Get(context.Background(), gw, got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "cannot be scheduled") || !strings.Contains(c.Message, "Insufficient cpu") {
			return fmt.Errorf("Programmed: %+v", c)
		}
		t.Logf("Programmed: %s", c.Message)
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		evs, err := testenv.EventsAbout(rt.Client, gw, "DataPlaneNotReady")
		if err != nil {
			return err
		}
		for _, e := range evs {
			if strings.Contains(e.Note, "Insufficient cpu") {
				return nil
			}
		}
		return fmt.Errorf("no DataPlaneNotReady event naming the scheduler's reason: %+v", evs)
	})
}
