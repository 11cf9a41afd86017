package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/translate"
)

// targetsInput reads a policy's targets from the cache into a snapshot (so
// translate can say which exist and which Gateways they attach to), with
// the ListenerSets route targets name.
func targetsInput(ctx context.Context, c client.Reader, cfg Config, targets []policy.TargetRef) (*graph.Input, error) {
	in := graph.NewInput(cfg.ControllerName)
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
		default:
			continue
		}
		found, err := get(t.Key, obj)
		if err != nil {
			return nil, err
		}
		if !found || refs == nil || !cfg.ListenerSets {
			continue
		}
		for _, s := range routeListenerSets(t.Key.Namespace, refs(), nil, cfg.ControllerName) {
			ns, name := splitNsName(s)
			if _, err := get(types.NamespacedName{Namespace: ns, Name: name}, &gatewayv1.ListenerSet{}); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

// ancestorGateways returns the Gateways a policy's targets are or name.
func ancestorGateways(ctx context.Context, c client.Reader, cfg Config, targets []policy.TargetRef) ([]types.NamespacedName, error) {
	in, err := targetsInput(ctx, c, cfg, targets)
	if err != nil {
		return nil, err
	}
	return translate.TargetGateways(in, targets), nil
}
