package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/translate"
)

// targetsInput reads a policy's targets from the cache into a snapshot (so
// translate can say which exist and which Gateways they attach to), with
// the ListenerSets route targets name.
func targetsInput(ctx context.Context, c client.Reader, cfg Config, targets []graph.ObjectRef) (*graph.Input, error) {
	in := graph.NewInput(cfg.ControllerName)
	return in, addTargets(ctx, c, cfg, in, targets)
}

// addTargets adds what targetsInput reads to in.
func addTargets(ctx context.Context, c client.Reader, cfg Config, in *graph.Input, targets []graph.ObjectRef) error {
	get := func(key types.NamespacedName, obj client.Object) (bool, error) {
		if err := c.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("reading %T %s: %w", obj, key, err)
		}
		in.Add(obj)
		return true, nil
	}
	for _, t := range targets {
		var obj client.Object
		var refs func() []gatewayv1.ParentReference
		switch t.Kind {
		case "Gateway":
			obj = &gatewayv1.Gateway{}
		case graph.KindHTTPRoute:
			r := &gatewayv1.HTTPRoute{}
			obj, refs = r, func() []gatewayv1.ParentReference { return r.Spec.ParentRefs }
		case graph.KindGRPCRoute:
			r := &gatewayv1.GRPCRoute{}
			obj, refs = r, func() []gatewayv1.ParentReference { return r.Spec.ParentRefs }
		case "Service":
			obj = &corev1.Service{}
		default:
			continue
		}
		found, err := get(t.Key, obj)
		if err != nil {
			return err
		}
		if !found || refs == nil || !cfg.served(apis.ListenerSet) {
			continue
		}
		for _, s := range snapshot.RouteListenerSets(t.Key.Namespace, refs(), nil, cfg.ControllerName) {
			ns, name := snapshot.SplitNsName(s)
			if _, err := get(types.NamespacedName{Namespace: ns, Name: name}, &gatewayv1.ListenerSet{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ancestorGateways returns the Gateways a policy's targets are or name, and
// for Service targets the Gateways of Gatewall's classes whose routes name
// the Service as a backend or mirror: the only Gateways that can be the
// policy's ancestors.
func ancestorGateways(ctx context.Context, c client.Reader, cfg Config, targets []graph.ObjectRef) ([]types.NamespacedName, error) {
	in, err := targetsInput(ctx, c, cfg, targets)
	if err != nil {
		return nil, err
	}
	return targetGateways(ctx, c, cfg, in, targets)
}

// targetGateways is ancestorGateways on the targets' snapshot in.
func targetGateways(ctx context.Context, c client.Reader, cfg Config, in *graph.Input, targets []graph.ObjectRef) ([]types.NamespacedName, error) {
	gws := translate.TargetGateways(in, targets)
	var services []types.NamespacedName
	for _, t := range targets {
		if t.Kind == "Service" {
			services = append(services, t.Key)
		}
	}
	more, err := serviceGateways(ctx, c, cfg, services)
	if err != nil {
		return nil, err
	}
	for _, k := range more {
		if !slices.Contains(gws, k) {
			gws = append(gws, k)
		}
	}
	sort.Slice(gws, func(i, j int) bool { return gws[i].String() < gws[j].String() })
	return gws, nil
}

// serviceGateways are the Gateways of Gatewall's classes that routes whose
// backendRefs or mirrors name one of the Services have as parents
// (TLSRoutes too: a policy on a Service they pass to says it does not
// reach their connections).
func serviceGateways(ctx context.Context, c client.Reader, cfg Config, services []types.NamespacedName) ([]types.NamespacedName, error) {
	seen := map[types.NamespacedName]bool{}
	var out []types.NamespacedName
	for _, svc := range services {
		routes, err := snapshot.ListRoutes(ctx, c, cfg.routeKinds(), client.MatchingFields{snapshot.IndexRouteService: snapshot.NsName(svc.Namespace, svc.Name)}, client.UnsafeDisableDeepCopy)
		if err != nil {
			return nil, err
		}
		for _, route := range routes {
			for _, k := range routeGatewayKeys(ctx, c, cfg, route) {
				if seen[k] {
					continue
				}
				seen[k] = true
				ours, err := gatewayIsOurs(ctx, c, cfg.ControllerName, k)
				if err != nil {
					return nil, err
				}
				if ours {
					out = append(out, k)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// gatewayIsOurs says whether a Gateway exists and its class is Gatewall's.
func gatewayIsOurs(ctx context.Context, c client.Reader, controllerName string, k types.NamespacedName) (bool, error) {
	if k.Name == "" {
		return false, nil
	}
	gw := &gatewayv1.Gateway{}
	if err := c.Get(ctx, k, gw); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	gc := &gatewayv1.GatewayClass{}
	if err := c.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, gc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return string(gc.Spec.ControllerName) == controllerName, nil
}

// targetsOf returns the targets of a policy of a kind.
func targetsOf(k policy.Kind, o client.Object) []graph.ObjectRef {
	return policy.TargetsOf(o, k.View(o).PolicyTargetRefs())
}

// existingGateways are the Gateways that may be a policy's ancestors
// (targetGateways) and exist.
func existingGateways(ctx context.Context, c client.Reader, cfg Config, in *graph.Input, targets []graph.ObjectRef) ([]types.NamespacedName, error) {
	gws, err := targetGateways(ctx, c, cfg, in, targets)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(gws, func(k types.NamespacedName) bool {
		return apierrors.IsNotFound(c.Get(ctx, k, &gatewayv1.Gateway{}))
	}), nil
}
