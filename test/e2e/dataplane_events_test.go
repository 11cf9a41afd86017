package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
