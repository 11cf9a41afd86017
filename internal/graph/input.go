package graph

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Input is the snapshot of cluster objects a Gateway's graph is built from.
// It may hold more than one Gateway's objects (the render command passes
// everything it read); Build uses what concerns the Gateway it builds. Objects
// are read, never modified.
type Input struct {
	// ControllerName is the GatewayClass controllerName Gatewall serves.
	ControllerName string

	GatewayClasses  map[string]*gatewayv1.GatewayClass
	Gateways        map[types.NamespacedName]*gatewayv1.Gateway
	HTTPRoutes      map[types.NamespacedName]*gatewayv1.HTTPRoute
	GRPCRoutes      map[types.NamespacedName]*gatewayv1.GRPCRoute
	ReferenceGrants map[types.NamespacedName]*gatewayv1beta1.ReferenceGrant
	Namespaces      map[string]*corev1.Namespace
	Services        map[types.NamespacedName]*corev1.Service
	// EndpointSlices are keyed by slice name; Build groups them by the
	// kubernetes.io/service-name label.
	EndpointSlices map[types.NamespacedName]*discoveryv1.EndpointSlice
	Secrets        map[types.NamespacedName]*corev1.Secret
	NginxProxies   map[types.NamespacedName]*v1alpha2.NginxProxy
	// ProxySettingsPolicies are read by package policy, not by the graph.
	ProxySettingsPolicies map[types.NamespacedName]*v1alpha1.ProxySettingsPolicy

	// sliceIndex groups EndpointSlices by Service; built on first use.
	sliceIndex map[types.NamespacedName][]*discoveryv1.EndpointSlice
}

// NewInput returns an Input with every map allocated.
func NewInput(controllerName string) *Input {
	return &Input{
		ControllerName:  controllerName,
		GatewayClasses:  map[string]*gatewayv1.GatewayClass{},
		Gateways:        map[types.NamespacedName]*gatewayv1.Gateway{},
		HTTPRoutes:      map[types.NamespacedName]*gatewayv1.HTTPRoute{},
		GRPCRoutes:      map[types.NamespacedName]*gatewayv1.GRPCRoute{},
		ReferenceGrants: map[types.NamespacedName]*gatewayv1beta1.ReferenceGrant{},
		Namespaces:      map[string]*corev1.Namespace{},
		Services:        map[types.NamespacedName]*corev1.Service{},
		EndpointSlices:  map[types.NamespacedName]*discoveryv1.EndpointSlice{},
		Secrets:         map[types.NamespacedName]*corev1.Secret{},
		NginxProxies:    map[types.NamespacedName]*v1alpha2.NginxProxy{},

		ProxySettingsPolicies: map[types.NamespacedName]*v1alpha1.ProxySettingsPolicy{},
	}
}

func key(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// Add puts an object into the snapshot; it returns false for kinds the graph
// does not use.
func (in *Input) Add(obj any) bool {
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		in.GatewayClasses[o.Name] = o
	case *gatewayv1.Gateway:
		in.Gateways[key(o.Namespace, o.Name)] = o
	case *gatewayv1.HTTPRoute:
		in.HTTPRoutes[key(o.Namespace, o.Name)] = o
	case *gatewayv1.GRPCRoute:
		in.GRPCRoutes[key(o.Namespace, o.Name)] = o
	case *gatewayv1beta1.ReferenceGrant:
		in.ReferenceGrants[key(o.Namespace, o.Name)] = o
	case *corev1.Namespace:
		in.Namespaces[o.Name] = o
	case *corev1.Service:
		in.Services[key(o.Namespace, o.Name)] = o
	case *discoveryv1.EndpointSlice:
		in.EndpointSlices[key(o.Namespace, o.Name)] = o
		in.sliceIndex = nil
	case *corev1.Secret:
		in.Secrets[key(o.Namespace, o.Name)] = o
	case *v1alpha2.NginxProxy:
		in.NginxProxies[key(o.Namespace, o.Name)] = o
	case *v1alpha1.ProxySettingsPolicy:
		in.ProxySettingsPolicies[key(o.Namespace, o.Name)] = o
	default:
		return false
	}
	return true
}
