package controller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// policyTranslations prepares a policy reconcile: a snapshot of the policy's
// targets (with every policy and PLM object, for WAF's status), the
// translation of each Gateway the targets concern (the same translation the
// Gateway reconciler computes), and what each Gateway's data plane did with
// that translation's configuration.
func policyTranslations(ctx context.Context, c client.Reader, cfg Config, dp dataplane.DataPlane, targets []graph.ObjectRef, gateways gatewayTranslations) (
	*graph.Input, []*translate.Translation, func(types.NamespacedName) status.DataPlane, error) {
	tin, err := targetsInput(ctx, c, cfg, targets)
	if err != nil {
		return nil, nil, nil, err
	}
	ancestors, err := targetGateways(ctx, c, cfg, tin, targets)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.plmSettings(tin)
	if err := addPolicies(ctx, c, cfg, tin); err != nil {
		return nil, nil, nil, err
	}
	ts, versions, err := gateways.translate(ctx, c, cfg, ancestors)
	if err != nil {
		return nil, nil, nil, err
	}
	held := map[types.NamespacedName]string{}
	byGateway := map[types.NamespacedName]*translate.Translation{}
	for _, t := range ts {
		byGateway[t.Graph.Key] = t
		if msg := t.HeldMessage(); msg != "" {
			held[t.Graph.Key] = msg
		}
	}
	dataPlane := func(gw types.NamespacedName) status.DataPlane {
		v, ok := versions[gw]
		switch {
		case held[gw] != "":
			return status.DataPlane{State: status.Pending, Message: held[gw]}
		case !ok:
			return status.DataPlane{State: status.Pending, Message: "Gateway " + gw.String() + " is not accepted, so it has no data plane configuration"}
		}
		return byGateway[gw].ExplainDataPlane(dp.State(gw, v))
	}
	return tin, ts, dataPlane, nil
}

// gatewayTranslations are the Gateways a pass of a policy reconciler has
// looked up, by key: the translation (nil: the Gateway does not exist or
// is not Gatewall's) and, for an accepted one, its configuration version.
type gatewayTranslations map[types.NamespacedName]gatewayTranslation

type gatewayTranslation struct {
	t       *translate.Translation
	version string
}

// translate returns the translation of each existing Gateway of keys (the
// same translation the Gateway reconciler computes), with the
// configuration version of each accepted one; a Gateway already looked up
// in this pass is not read again.
func (g gatewayTranslations) translate(ctx context.Context, c client.Reader, cfg Config, keys []types.NamespacedName) (
	[]*translate.Translation, map[types.NamespacedName]string, error) {
	var ts []*translate.Translation
	versions := map[types.NamespacedName]string{}
	for _, k := range keys {
		got, seen := g[k]
		if !seen {
			var err error
			if got, err = lookUpGateway(ctx, c, cfg, k); err != nil {
				return nil, nil, err
			}
			g[k] = got
		}
		if got.t != nil {
			ts = append(ts, got.t)
			if got.t.Files != nil {
				versions[k] = got.version
			}
		}
	}
	return ts, versions, nil
}

// lookUpGateway reads a Gateway's snapshot and finds (or makes) its
// translation.
func lookUpGateway(ctx context.Context, c client.Reader, cfg Config, k types.NamespacedName) (gatewayTranslation, error) {
	gw := &gatewayv1.Gateway{}
	if err := c.Get(ctx, k, gw); err != nil {
		return gatewayTranslation{}, client.IgnoreNotFound(err)
	}
	in, err := snapshot(ctx, c, cfg, gw)
	if err != nil {
		return gatewayTranslation{}, err
	}
	t := cfg.Translations.Cached(in, k)
	if t == nil || t.Files == nil {
		return gatewayTranslation{t: t}, nil
	}
	return gatewayTranslation{t: t, version: datafile.Version(t.Files)}, nil
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
		if err := c.List(ctx, l); err != nil {
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
