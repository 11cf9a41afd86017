package controller

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/routekind"
)

// Field indexes on the informer cache, so a reconcile reads only the
// objects that concern its Gateway instead of listing everything.
const (
	// indexRouteGateway: a route's Gateways, from spec.parentRefs and from
	// the parent statuses Gatewall wrote (so a Gateway a route left can
	// remove its stale status).
	indexRouteGateway = "gatewall.route.gateway"
	// indexRouteService: the Services a route's backendRefs and mirrors name.
	indexRouteService = "gatewall.route.service"
	// indexGatewayClass: a Gateway's class.
	indexGatewayClass = "gatewall.gateway.class"
	// indexGatewaySecret: the Secrets a Gateway's listeners use.
	indexGatewaySecret = "gatewall.gateway.secret"
	// indexGatewayConfigMap: the ConfigMaps (CA bundles) a Gateway's tls.frontend uses.
	indexGatewayConfigMap = "gatewall.gateway.configmap"
	// indexGatewayNginxProxy: the NginxProxy a Gateway's infrastructure names.
	indexGatewayNginxProxy = "gatewall.gateway.nginxproxy"
	// indexSliceService: an EndpointSlice's Service.
	indexSliceService = "gatewall.endpointslice.service"
	// indexRouteListenerSet: a route's ListenerSets, from spec.parentRefs and
	// from the parent statuses Gatewall wrote.
	indexRouteListenerSet = "gatewall.route.listenerset"
	// indexListenerSetGateway: the Gateway a ListenerSet's parentRef names.
	indexListenerSetGateway = "gatewall.listenerset.gateway"
	// indexListenerSetSecret: the Secrets a ListenerSet's listeners use.
	indexListenerSetSecret = "gatewall.listenerset.secret"
)

func nsName(namespace, name string) string { return namespace + "/" + name }

// listenerSetIndexes are the indexes that need the ListenerSet CRD.
func listenerSetIndexes() []fieldIndex {
	return []fieldIndex{
		{&gatewayv1.ListenerSet{}, indexListenerSetGateway, func(o client.Object) []string {
			if gw := graph.ListenerSetParent(o.(*gatewayv1.ListenerSet)); gw.Name != "" {
				return []string{gw.String()}
			}
			return nil
		}},
		{&gatewayv1.ListenerSet{}, indexListenerSetSecret, func(o client.Object) []string { return listenerSetSecrets(o.(*gatewayv1.ListenerSet)) }},
	}
}

type fieldIndex struct {
	obj   client.Object
	field string
	fn    client.IndexerFunc
}

// setupIndexes registers the field indexes.
func setupIndexes(ctx context.Context, mgr ctrl.Manager, cfg Config) error {
	controllerName := cfg.ControllerName
	indexes := []fieldIndex{
		{&gatewayv1.Gateway{}, indexGatewayClass, func(o client.Object) []string {
			return []string{string(o.(*gatewayv1.Gateway).Spec.GatewayClassName)}
		}},
		{&gatewayv1.Gateway{}, indexGatewaySecret, func(o client.Object) []string { return gatewaySecrets(o.(*gatewayv1.Gateway)) }},
		{&gatewayv1.Gateway{}, indexGatewayConfigMap, func(o client.Object) []string { return gatewayConfigMaps(o.(*gatewayv1.Gateway)) }},
		{&gatewayv1.Gateway{}, indexGatewayNginxProxy, func(o client.Object) []string {
			gw := o.(*gatewayv1.Gateway)
			if gw.Spec.Infrastructure == nil || gw.Spec.Infrastructure.ParametersRef == nil {
				return nil
			}
			return []string{nsName(gw.Namespace, gw.Spec.Infrastructure.ParametersRef.Name)}
		}},
		{&discoveryv1.EndpointSlice{}, indexSliceService, func(o client.Object) []string {
			if svc := o.GetLabels()[discoveryv1.LabelServiceName]; svc != "" {
				return []string{nsName(o.GetNamespace(), svc)}
			}
			return nil
		}},
	}
	// Routes are indexed by the ListenerSets they name whether or not the
	// ListenerSet CRD is installed: it may be later. The kinds whose CRD
	// is optional are indexed once it is served.
	for _, k := range routekind.Required() {
		indexes = append(indexes, routeIndexes(k, controllerName)...)
	}
	idx := mgr.GetFieldIndexer()
	index := func(indexes []fieldIndex) error {
		for _, e := range indexes {
			if err := idx.IndexField(ctx, e.obj, e.field, e.fn); err != nil {
				return fmt.Errorf("indexing %T by %s: %w", e.obj, e.field, err)
			}
		}
		return nil
	}
	if err := index(indexes); err != nil {
		return err
	}
	// Before anything that lists by them (When runs uses in order).
	if err := cfg.APIs.When(APIListenerSet, func() error { return index(listenerSetIndexes()) }); err != nil {
		return err
	}
	for _, k := range routekind.Optional() {
		if err := cfg.APIs.When(routeAPI(k), func() error { return index(routeIndexes(k, controllerName)) }); err != nil {
			return err
		}
	}
	return nil
}

// routeGateways lists the Gateways a route names or has Gatewall status from.
func routeGateways(ns string, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus, controllerName string) []string {
	return routeParentKeys("Gateway", ns, refs, parents, controllerName)
}

// routeListenerSets lists the ListenerSets a route names or has Gatewall status from.
func routeListenerSets(ns string, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus, controllerName string) []string {
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
	return nsName(ns, string(ref.Name)), true
}

func gatewaySecrets(gw *gatewayv1.Gateway) []string {
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

// listenerSetSecrets are the Secrets a ListenerSet's listeners use.
func listenerSetSecrets(ls *gatewayv1.ListenerSet) []string {
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
		seen[nsName(refNS, string(ref.Name))] = true
	}
	return keys(seen)
}

// gatewayConfigMaps are the ConfigMaps a Gateway's client certificate
// validation names (default and per port).
func gatewayConfigMaps(gw *gatewayv1.Gateway) []string {
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
			seen[nsName(ns, string(ref.Name))] = true
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
