package snapshot

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/routekind"
)

// Field indexes on the informer cache, so a reconcile reads only the
// objects that concern its Gateway instead of listing everything. The
// manager registers them (FieldIndex); watches and snapshots list by them.
const (
	// IndexRouteGateway: a route's Gateways, from spec.parentRefs and from
	// the parent statuses Gatewall wrote (so a Gateway a route left can
	// remove its stale status).
	IndexRouteGateway = "gatewall.route.gateway"
	// IndexRouteService: the Services a route's backendRefs and mirrors name.
	IndexRouteService = "gatewall.route.service"
	// IndexGatewayClass: a Gateway's class.
	IndexGatewayClass = "gatewall.gateway.class"
	// IndexGatewaySecret: the Secrets a Gateway's listeners use.
	IndexGatewaySecret = "gatewall.gateway.secret"
	// IndexGatewayConfigMap: the ConfigMaps (CA bundles) a Gateway's tls.frontend uses.
	IndexGatewayConfigMap = "gatewall.gateway.configmap"
	// IndexGatewayNginxProxy: the NginxProxy a Gateway's infrastructure names.
	IndexGatewayNginxProxy = "gatewall.gateway.nginxproxy"
	// IndexSliceService: an EndpointSlice's Service.
	IndexSliceService = "gatewall.endpointslice.service"
	// IndexRouteListenerSet: a route's ListenerSets, from spec.parentRefs and
	// from the parent statuses Gatewall wrote.
	IndexRouteListenerSet = "gatewall.route.listenerset"
	// IndexListenerSetGateway: the Gateway a ListenerSet's parentRef names.
	IndexListenerSetGateway = "gatewall.listenerset.gateway"
	// IndexListenerSetSecret: the Secrets a ListenerSet's listeners use.
	IndexListenerSetSecret = "gatewall.listenerset.secret"
	// IndexRouteFilter: the filters a route's rules name in ExtensionRef
	// filters, as graph.ObjectRef strings (AuthenticationFilter ns/name).
	IndexRouteFilter = "gatewall.route.filter"
	// IndexFilterSecret: the Secrets a filter reads.
	IndexFilterSecret = "gatewall.filter.secret"
)

// NsName is the key of a namespaced object in the indexes.
func NsName(namespace, name string) string { return namespace + "/" + name }

// ListenerSetIndexes are the indexes that need the ListenerSet CRD.
func ListenerSetIndexes() []FieldIndex {
	return []FieldIndex{
		{&gatewayv1.ListenerSet{}, IndexListenerSetGateway, func(o client.Object) []string {
			if gw := graph.ListenerSetParent(o.(*gatewayv1.ListenerSet)); gw.Name != "" {
				return []string{gw.String()}
			}
			return nil
		}},
		{&gatewayv1.ListenerSet{}, IndexListenerSetSecret, func(o client.Object) []string { return ListenerSetSecrets(o.(*gatewayv1.ListenerSet)) }},
	}
}

// FieldIndex is one field index: of objects like Obj, by Field, with the
// values Fn extracts.
type FieldIndex struct {
	Obj   client.Object
	Field string
	Fn    client.IndexerFunc
}

// Indexes are the indexes of the kinds every cluster serves (Gateways,
// EndpointSlices, and the required route kinds, whose index by ListenerSet
// exists whether or not the ListenerSet CRD is installed: it may be later);
// ListenerSetIndexes and an optional route kind's RouteIndexes wait for
// their CRD.
func Indexes(controllerName string) []FieldIndex {
	indexes := []FieldIndex{
		{&gatewayv1.Gateway{}, IndexGatewayClass, func(o client.Object) []string {
			return []string{string(o.(*gatewayv1.Gateway).Spec.GatewayClassName)}
		}},
		{&gatewayv1.Gateway{}, IndexGatewaySecret, func(o client.Object) []string { return GatewaySecrets(o.(*gatewayv1.Gateway)) }},
		{&gatewayv1.Gateway{}, IndexGatewayConfigMap, func(o client.Object) []string { return GatewayConfigMaps(o.(*gatewayv1.Gateway)) }},
		{&gatewayv1.Gateway{}, IndexGatewayNginxProxy, func(o client.Object) []string {
			gw := o.(*gatewayv1.Gateway)
			if gw.Spec.Infrastructure == nil || gw.Spec.Infrastructure.ParametersRef == nil {
				return nil
			}
			return []string{NsName(gw.Namespace, gw.Spec.Infrastructure.ParametersRef.Name)}
		}},
		{&discoveryv1.EndpointSlice{}, IndexSliceService, func(o client.Object) []string {
			if svc := o.GetLabels()[discoveryv1.LabelServiceName]; svc != "" {
				return []string{NsName(o.GetNamespace(), svc)}
			}
			return nil
		}},
	}
	for _, k := range routekind.Required() {
		indexes = append(indexes, RouteIndexes(k, controllerName)...)
	}
	for _, k := range graph.ExtensionFilterKinds {
		indexes = append(indexes, FieldIndex{k.New(), IndexFilterSecret, func(o client.Object) []string {
			var out []string
			for _, s := range k.Secrets(o) {
				out = append(out, s.String())
			}
			return out
		}})
	}
	return indexes
}

// RouteGateways lists the Gateways a route names or has Gatewall status from.
func RouteGateways(ns string, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus, controllerName string) []string {
	return routeParentKeys("Gateway", ns, refs, parents, controllerName)
}

// RouteListenerSets lists the ListenerSets a route names or has Gatewall status from.
func RouteListenerSets(ns string, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus, controllerName string) []string {
	return routeParentKeys(graph.KindListenerSet, ns, refs, parents, controllerName)
}

// routeParentKeys lists the parents of one kind a route names or has
// Gatewall status from.
func routeParentKeys(kind, ns string, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus, controllerName string) []string {
	seen := map[string]bool{}
	add := func(ref gatewayv1.ParentReference) {
		if p := graph.ParentOf(ref, ns); p.Is(kind) {
			seen[p.Key.String()] = true
		}
	}
	for _, r := range refs {
		add(r)
	}
	for _, p := range parents {
		if string(p.ControllerName) == controllerName {
			add(p.ParentRef)
		}
	}
	return keys(seen)
}

func backendService(ns string, ref gatewayv1.BackendObjectReference) (string, bool) {
	if ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Service" {
		return "", false
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return NsName(ns, string(ref.Name)), true
}

func GatewaySecrets(gw *gatewayv1.Gateway) []string {
	var refs []gatewayv1.SecretObjectReference
	for _, l := range gw.Spec.Listeners {
		if l.TLS != nil {
			refs = append(refs, l.TLS.CertificateRefs...)
		}
	}
	if t := gw.Spec.TLS; t != nil && t.Backend != nil && t.Backend.ClientCertificateRef != nil {
		refs = append(refs, *t.Backend.ClientCertificateRef)
	}
	return secretKeys(gw.Namespace, refs)
}

// ListenerSetSecrets are the Secrets a ListenerSet's listeners use.
func ListenerSetSecrets(ls *gatewayv1.ListenerSet) []string {
	var refs []gatewayv1.SecretObjectReference
	for _, l := range ls.Spec.Listeners {
		if l.TLS != nil {
			refs = append(refs, l.TLS.CertificateRefs...)
		}
	}
	return secretKeys(ls.Namespace, refs)
}

// secretKeys are the namespace/name keys of the Secrets among refs of an
// object in namespace ns.
func secretKeys(ns string, refs []gatewayv1.SecretObjectReference) []string {
	seen := map[string]bool{}
	for _, ref := range refs {
		if ref.Kind != nil && *ref.Kind != "Secret" || ref.Group != nil && *ref.Group != "" {
			continue
		}
		refNS := ns
		if ref.Namespace != nil {
			refNS = string(*ref.Namespace)
		}
		seen[NsName(refNS, string(ref.Name))] = true
	}
	return keys(seen)
}

// GatewayConfigMaps are the ConfigMaps a Gateway's client certificate
// validation names (default and per port).
func GatewayConfigMaps(gw *gatewayv1.Gateway) []string {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	validations := []*gatewayv1.FrontendTLSValidation{f.Default.Validation}
	for _, p := range f.PerPort {
		validations = append(validations, p.TLS.Validation)
	}
	seen := map[string]bool{}
	for _, v := range validations {
		if v == nil {
			continue
		}
		for _, ref := range v.CACertificateRefs {
			if ref.Group != "" || ref.Kind != "ConfigMap" {
				continue
			}
			ns := gw.Namespace
			if ref.Namespace != nil {
				ns = string(*ref.Namespace)
			}
			seen[NsName(ns, string(ref.Name))] = true
		}
	}
	return keys(seen)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
