package statuswrite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/test/testenv"
)

// ancestorEntry is a policy's ancestor status of Gateway ns/name by
// controller ctrl, accepted for reason.
func ancestorEntry(ctrl, ns, name, reason string) gatewayv1.PolicyAncestorStatus {
	return gatewayv1.PolicyAncestorStatus{
		AncestorRef: gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")),
			Namespace: ptr.To(gatewayv1.Namespace(ns)), Name: gatewayv1.ObjectName(name)},
		ControllerName: gatewayv1.GatewayController(ctrl),
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, Message: reason, ObservedGeneration: 1,
			LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0))}},
	}
}

// TestPolicyStatusWriter, against a real API server: a policy's status is
// set from every owner's newest entry at once (each Gateway's, and its
// targets'), keeping other controllers' entries; an entry written before
// (by an earlier manager) stays until its owner decides, unless its
// Gateway is gone; an owner that says it has none removes its entry; a
// policy that is deleted is forgotten.
func TestPolicyStatusWriter(t *testing.T) {
	const ns = "policies"
	ctx, env := startAPIServer(t, ns)
	c := env.Client
	for _, name := range []string{"gw1", "gw2"} {
		if err := c.Create(ctx, testenv.Gateway(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	p := &v1alpha1.ProxySettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
		Spec: v1alpha1.ProxySettingsPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReference{
			{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw1"}, {Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw2"},
			{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "missing"}}}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	// Written before this writer: another controller's entry, Gatewall's
	// for gw1 and gw2, and for a Gateway that is gone since.
	p.Status.Ancestors = []gatewayv1.PolicyAncestorStatus{ancestorEntry(theirs, ns, "gw1", "Theirs"),
		ancestorEntry(ours, ns, "gw1", "Earlier"), ancestorEntry(ours, ns, "gw2", "Earlier"), ancestorEntry(ours, ns, "gone", "Earlier")}
	if err := c.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	rw := statuswrite.NewRouteWriter(c, logr.Discard())
	go func() { _ = rw.Start(ctx) }()
	w := statuswrite.NewPolicyWriter(rw.Jobs, c, ours, nil)
	ref := graph.ObjectRef{Kind: "ProxySettingsPolicy", Key: types.NamespacedName{Namespace: ns, Name: "p"}}
	gw1 := types.NamespacedName{Namespace: ns, Name: "gw1"}
	accepted := func(reason string) *statuswrite.PolicyEntry {
		return &statuswrite.PolicyEntry{Ancestors: []status.Ancestor{{Ref: status.GatewayAncestor(gw1),
			Outcome:   &policy.Outcome{Generation: 1, Accepted: conditions.True("Accepted", reason, reason)},
			DataPlane: status.DataPlane{State: status.Applied}}}}
	}

	// Its targets' entry: the missing route; gw1's and gw2's earlier entries
	// stay, the gone Gateway's goes.
	missing := status.TargetNotFound(gatewayv1.GroupName, graph.ObjectRef{Kind: "HTTPRoute", Key: types.NamespacedName{Namespace: ns, Name: "missing"}}, 1)
	w.Set(ref, statuswrite.TargetsOwner, &statuswrite.PolicyEntry{Ancestors: []status.Ancestor{missing}})
	waitAncestors(t, c, p, []string{theirs + " Gateway/policies/gw1 Theirs", ours + " Gateway/policies/gw1 Earlier",
		ours + " Gateway/policies/gw2 Earlier", ours + " HTTPRoute/policies/missing TargetNotFound"})

	// gw1 decides its entry; gw2's stays as written.
	w.Set(ref, statuswrite.GatewayOwner(gw1), accepted("Decided"))
	waitAncestors(t, c, p, []string{theirs + " Gateway/policies/gw1 Theirs", ours + " Gateway/policies/gw1 Decided",
		ours + " Gateway/policies/gw2 Earlier", ours + " HTTPRoute/policies/missing TargetNotFound"})

	// gw2 says it has none; the route exists now.
	w.Set(ref, statuswrite.GatewayOwner(types.NamespacedName{Namespace: ns, Name: "gw2"}), nil)
	w.Set(ref, statuswrite.TargetsOwner, &statuswrite.PolicyEntry{})
	waitAncestors(t, c, p, []string{theirs + " Gateway/policies/gw1 Theirs", ours + " Gateway/policies/gw1 Decided"})
	if got := w.Owned(statuswrite.GatewayOwner(gw1)); !slices.Equal(got, []graph.ObjectRef{ref}) {
		t.Errorf("gw1 owns entries of %v, want %v", got, ref)
	}

	// A status the policy shows already is not written again (its resourceVersion
	// stays); a deleted policy is forgotten.
	before := &v1alpha1.ProxySettingsPolicy{}
	if err := c.Get(ctx, ref.Key, before); err != nil {
		t.Fatal(err)
	}
	// A new entry that sets the same status (a snapshot the kind does not
	// read) is written only if the status changes.
	w.Set(ref, statuswrite.TargetsOwner, &statuswrite.PolicyEntry{In: graph.NewInput(ours)})
	time.Sleep(500 * time.Millisecond)
	after := &v1alpha1.ProxySettingsPolicy{}
	if err := c.Get(ctx, ref.Key, after); err != nil {
		t.Fatal(err)
	}
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("an unchanged status was written again: resourceVersion %s → %s", before.ResourceVersion, after.ResourceVersion)
	}
	if err := c.Delete(ctx, after); err != nil {
		t.Fatal(err)
	}
	w.Set(ref, statuswrite.GatewayOwner(gw1), accepted("AfterDeletion"))
	testenv.Eventually(t, 30*time.Second, func() error {
		if got := w.Owned(statuswrite.GatewayOwner(gw1)); len(got) != 0 {
			return fmt.Errorf("the deleted policy is still held: %v", got)
		}
		return nil
	})
}

// waitAncestors waits until the policy's ancestors are want, each
// "controller ancestor reason-of-Accepted", in order.
func waitAncestors(t *testing.T, c client.Client, p *v1alpha1.ProxySettingsPolicy, want []string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		cur := &v1alpha1.ProxySettingsPolicy{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), cur); err != nil {
			return err
		}
		var got []string
		for _, a := range cur.Status.Ancestors {
			reason := ""
			if cond := meta.FindStatusCondition(a.Conditions, "Accepted"); cond != nil {
				reason = cond.Reason
			}
			got = append(got, fmt.Sprintf("%s %s %s", a.ControllerName, status.RefString(a.AncestorRef), reason))
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("ancestors %q, want %q", got, want)
		}
		return nil
	})
}
