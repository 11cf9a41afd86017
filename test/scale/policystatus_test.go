package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/test/testenv"
)

// policyStatus changes the body size of the policy on the first route
// (cs-1) once per sample and times each change until the policy's status
// says so: Accepted for the new generation (the control plane: a policy's
// status comes from the Gateway reconciler's translation of the Gateway,
// made again for the change), then Programmed for it (the data plane runs
// the configuration, NGINX's test and reload included). What is asserted:
// every change reaches both.
func (b *big) policyStatus(t *testing.T) {
	if *policiesFlag < 2 {
		t.Logf("-scale.policies %d: no policy on a route to change", *policiesFlag)
		return
	}
	ctx := context.Background()
	key := types.NamespacedName{Namespace: b.ns, Name: "cs-1"}
	var accepted, programmed []time.Duration
	for j := range *samplesFlag {
		var generation int64
		start := time.Now()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p := &v1alpha1.ClientSettingsPolicy{}
			if err := rt.Client.Get(ctx, key, p); err != nil {
				return err
			}
			size := v1alpha1.ByteSize(fmt.Sprintf("%dm", 5+j))
			p.Spec.Body = &v1alpha1.ClientBody{MaxSize: &size}
			if err := rt.Client.Update(ctx, p); err != nil {
				return err
			}
			generation = p.Generation
			return nil
		})
		if err != nil {
			t.Fatalf("changing policy %s: %v", key, err)
		}
		var acceptedAt time.Time
		testenv.Eventually(t, 2*time.Minute, func() error {
			p := &v1alpha1.ClientSettingsPolicy{}
			if err := rt.Client.Get(ctx, key, p); err != nil {
				return err
			}
			if acceptedAt.IsZero() && ancestorsSay(p.Status.Ancestors, "Accepted", generation) {
				acceptedAt = time.Now()
			}
			if !ancestorsSay(p.Status.Ancestors, "Programmed", generation) {
				return fmt.Errorf("policy %s generation %d: status %+v", key, generation, p.Status.Ancestors)
			}
			return nil
		})
		if acceptedAt.IsZero() {
			acceptedAt = time.Now() // seen with Programmed in one read
		}
		accepted, programmed = append(accepted, acceptedAt.Sub(start)), append(programmed, time.Since(start))
	}
	t.Logf("policy change to Accepted: %v; to Programmed: %v", accepted, programmed)
	report.add("policy change to its status: Accepted, Programmed for the new generation, p50 / max",
		fmt.Sprintf("%s / %s; %s / %s (%d changes)", ms(percentile(accepted, 0.5)), ms(percentile(accepted, 1)),
			ms(percentile(programmed, 0.5)), ms(percentile(programmed, 1)), len(accepted)), "")
}

// ancestorsSay says whether Gatewall's ancestor statuses hold a True
// condition of type for the generation (and there is one at least).
func ancestorsSay(ancestors []gatewayv1.PolicyAncestorStatus, typ string, generation int64) bool {
	n := 0
	for _, a := range ancestors {
		if string(a.ControllerName) != manager.DefaultControllerName {
			continue
		}
		c := meta.FindStatusCondition(a.Conditions, typ)
		if c == nil || c.Status != "True" || c.ObservedGeneration != generation {
			return false
		}
		n++
	}
	return n > 0
}
