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
// translate can say which exist and which Gateways they attach to).
func targetsInput(ctx context.Context, c client.Reader, controllerName string, targets []policy.TargetRef) (*graph.Input, error) {
	in := graph.NewInput(controllerName)
	for _, t := range targets {
		var obj client.Object
		switch t.Kind {
		case "Gateway":
			obj = &gatewayv1.Gateway{}
		case graph.KindHTTPRoute:
			obj = &gatewayv1.HTTPRoute{}
		case graph.KindGRPCRoute:
			obj = &gatewayv1.GRPCRoute{}
		default:
			continue
		}
		if err := c.Get(ctx, t.Key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading %s: %w", t, err)
		}
		in.Add(obj)
	}
	return in, nil
}

// ancestorGateways returns the Gateways a policy's targets are or name.
func ancestorGateways(ctx context.Context, c client.Reader, targets []policy.TargetRef) ([]types.NamespacedName, error) {
	in, err := targetsInput(ctx, c, "", targets)
	if err != nil {
		return nil, err
	}
	return translate.TargetGateways(in, targets), nil
}
