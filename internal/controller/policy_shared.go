package controller

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// policyTranslations prepares a policy reconcile: the pass's snapshot with
// the policy's targets (and every policy and PLM object, for WAF's
// status), the Gateway reconciler's kept translation of each Gateway the
// targets concern, and what each Gateway's data plane did with that translation's
// configuration. waiting says that a Gateway's kept translation is older
// than the policy: it was asked for again, and the policy's status waits
// for it.
func policyTranslations(ctx context.Context, c client.Reader, cfg Config, dp dataplane.DataPlane, p graph.ObjectRef, version string,
	targets []graph.ObjectRef, pass *policyPass) (
	tin *graph.Input, ts []*translate.Translation, dataPlane func(types.NamespacedName) status.DataPlane, waiting bool, err error) {
	tin, err = pass.input(ctx, c, cfg, targets)
	if err != nil {
		return nil, nil, nil, false, err
	}
	ancestors, err := targetGateways(ctx, c, cfg, tin, targets)
	if err != nil {
		return nil, nil, nil, false, err
	}
	ts, versions, waiting, err := pass.gateways.kept(ctx, c, cfg, ancestors, p, version)
	if err != nil || waiting {
		return nil, nil, nil, waiting, err
	}
	held := map[types.NamespacedName]string{}
	byGateway := map[types.NamespacedName]*translate.Translation{}
	for _, t := range ts {
		byGateway[t.Graph.Key] = t
		if msg := t.HeldMessage(); msg != "" {
			held[t.Graph.Key] = msg
		}
	}
	dataPlane = func(gw types.NamespacedName) status.DataPlane {
		v, ok := versions[gw]
		switch {
		case held[gw] != "":
			return status.DataPlane{State: status.Pending, Message: held[gw]}
		case !ok:
			return status.DataPlane{State: status.Pending, Message: "Gateway " + gw.String() + " is not accepted, so it has no data plane configuration"}
		}
		return byGateway[gw].ExplainDataPlane(dp.State(gw, v))
	}
	return tin, ts, dataPlane, false, nil
}

// policyPass is what one pass of a policy reconciler reads once for all
// the kind's policies: the Gateways' kept translations, and one snapshot of
// the policies' targets with every policy, PLM object and bundle (which
// policies' own statuses read). Listed once per policy instead, 50
// policies were copied 2,500 times in each pass: 30% of the manager's CPU
// under route churn (docs/benchmarks.md).
type policyPass struct {
	gateways gatewayTranslations
	in       *graph.Input
}

func newPolicyPass() *policyPass { return &policyPass{gateways: gatewayTranslations{}} }

// input returns the pass's snapshot, with the targets added.
func (p *policyPass) input(ctx context.Context, c client.Reader, cfg Config, targets []graph.ObjectRef) (*graph.Input, error) {
	if p.in == nil {
		in := graph.NewInput(cfg.ControllerName)
		snap := cfg.reader(c)
		snap.Settings(in)
		if err := snap.AddPolicies(ctx, in); err != nil {
			return nil, err
		}
		p.in = in
	}
	return p.in, addTargets(ctx, c, cfg, p.in, targets)
}

// gatewayTranslations are the Gateways a pass of a policy reconciler has
// looked up, by key.
type gatewayTranslations map[types.NamespacedName]gatewayTranslation

// gatewayTranslation is what a pass found of a Gateway: that it does not
// exist (gone), or the Gateway reconciler's kept translation (kept: there
// is one; its t is nil for a Gateway that is not Gatewall's).
type gatewayTranslation struct {
	gone bool
	kept bool
	translated
}

// kept returns the kept translation of each existing Gateway of keys whose
// input held the policy p at version, with the configuration version of
// each accepted one; waiting when a Gateway's is older (or there is none
// yet): it is asked for (Translations.Outdated). A Gateway looked up already
// in this pass is not looked up again.
func (g gatewayTranslations) kept(ctx context.Context, c client.Reader, cfg Config, keys []types.NamespacedName, p graph.ObjectRef, version string) (
	ts []*translate.Translation, versions map[types.NamespacedName]string, waiting bool, err error) {
	versions = map[types.NamespacedName]string{}
	for _, k := range keys {
		got, seen := g[k]
		if !seen {
			if got, err = lookUpGateway(ctx, c, cfg, k); err != nil {
				return nil, nil, false, err
			}
			g[k] = got
		}
		switch {
		case got.gone:
			continue
		case !got.kept || got.policies[p] != version:
			cfg.Translations.Outdated(k)
			waiting = true
			continue
		case got.t != nil:
			ts = append(ts, got.t)
			if got.version != "" {
				versions[k] = got.version
			}
		}
	}
	return ts, versions, waiting, nil
}

// lookUpGateway finds the Gateway reconciler's kept translation of a
// Gateway, or that the Gateway does not exist.
func lookUpGateway(ctx context.Context, c client.Reader, cfg Config, k types.NamespacedName) (gatewayTranslation, error) {
	if last, ok := cfg.Translations.kept(k); ok {
		return gatewayTranslation{kept: true, translated: last}, nil
	}
	if err := c.Get(ctx, k, &gatewayv1.Gateway{}); err != nil {
		return gatewayTranslation{gone: apierrors.IsNotFound(err)}, client.IgnoreNotFound(err)
	}
	return gatewayTranslation{}, nil
}

// targetsOf returns the targets of a policy of a kind.
func targetsOf(k policy.Kind, o client.Object) []graph.ObjectRef {
	return policy.TargetsOf(o, k.View(o).PolicyTargetRefs())
}

// policiesOfGateway maps a Gateway whose data plane changed to the policies
// of one kind that have the Gateway as an ancestor: their Programmed
// follows that data plane, and no other policy's does.
func policiesOfGateway(c client.Reader, cfg Config, k policy.Kind) func(context.Context, types.NamespacedName) []reconcile.Request {
	return func(ctx context.Context, gw types.NamespacedName) []reconcile.Request {
		l := k.NewList()
		if err := c.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil { // only their targets are read
			log.FromContext(ctx).Error(err, "listing policies of a Gateway", "list", fmt.Sprintf("%T", l))
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(l, func(o runtime.Object) error {
			obj, ok := o.(client.Object)
			if !ok {
				return nil
			}
			gws, err := ancestorGateways(ctx, c, cfg, targetsOf(k, obj))
			if err != nil {
				log.FromContext(ctx).Error(err, "finding the Gateways of a policy", "policy", client.ObjectKeyFromObject(obj))
				return nil
			}
			if slices.Contains(gws, gw) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
			return nil
		})
		return reqs
	}
}
