package graph

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
	"github.com/gatewall/gatewall/internal/routekind"
)

// DefaultControllerName is the GatewayClass controllerName Gatewall serves
// unless told another (the manager's --gateway-ctlr-name).
const DefaultControllerName = "gateway.nginx.org/nginx-gateway-controller"

// Input is the snapshot of cluster objects a Gateway's graph is built from.
// It may hold more than one Gateway's objects (the render command passes
// everything it read); Build uses what concerns the Gateway it builds. Objects
// are read, never modified.
type Input struct {
	// ControllerName is the GatewayClass controllerName Gatewall serves.
	ControllerName string

	GatewayClasses map[string]*gatewayv1.GatewayClass
	Gateways       map[types.NamespacedName]*gatewayv1.Gateway
	ListenerSets   map[types.NamespacedName]*gatewayv1.ListenerSet
	// Routes are the routes of every kind of routekind.Kinds, by kind name
	// (graph.KindHTTPRoute...), then namespace/name: use Add and Route.
	Routes          map[string]map[types.NamespacedName]client.Object
	ReferenceGrants map[types.NamespacedName]*gatewayv1beta1.ReferenceGrant
	Namespaces      map[string]*corev1.Namespace
	Services        map[types.NamespacedName]*corev1.Service
	// EndpointSlices are keyed by slice name; Build groups them by the
	// kubernetes.io/service-name label.
	EndpointSlices map[types.NamespacedName]*discoveryv1.EndpointSlice
	Secrets        map[types.NamespacedName]*corev1.Secret
	ConfigMaps     map[types.NamespacedName]*corev1.ConfigMap
	// BackendTLSPolicies say how to speak TLS to Service ports.
	BackendTLSPolicies map[types.NamespacedName]*gatewayv1.BackendTLSPolicy
	NginxProxies       map[types.NamespacedName]*v1alpha2.NginxProxy
	// UnreadableNginxProxies are the stubs of NginxProxies that do not
	// decode (UnreadableAnnotation): the graph uses none of them (the
	// Gateways naming one say why); only their own statuses read them.
	UnreadableNginxProxies map[types.NamespacedName]*v1alpha2.NginxProxy
	// Filters are the objects of the kinds ExtensionRef filters may name
	// (ExtensionFilterKinds), by kind name, then namespace/name: use Add.
	Filters map[string]map[types.NamespacedName]client.Object
	// Policies are the policies of Gatewall's own kinds (package policy
	// evaluates them; BackendTLSPolicies, which the graph reads, are
	// apart), by kind, then namespace/name. The graph does not read them.
	Policies map[string]map[types.NamespacedName]v1alpha1.Policy
	// PLMGroup is the API group of the installed PLM APPolicy/APLogConf CRDs
	// ("" when PLM is not installed).
	PLMGroup string
	// PLMScope is where bundles may be fetched from (the manager's
	// --plm-storage-bucket and --plm-storage-prefix): a PLM status naming a
	// location outside it is refused. The zero Scope admits every location.
	PLMScope plm.Scope
	// APPolicies and APLogConfs are the PLM objects' statuses, by namespace/name.
	APPolicies map[types.NamespacedName]*plm.Status
	APLogConfs map[types.NamespacedName]*plm.Status
	// Bundles are what the fetcher has of each wanted bundle, by sha256.
	Bundles map[string]Bundle
	// WAFModule is the path of the App Protect module NGINX loads when WAF
	// is enabled ("" for the default of the data-plane image).
	WAFModule string
	// Snippets says the installation enables snippets (the manager's
	// --snippets): without it SnippetsFilters and SnippetsPolicies are
	// read only to say, in their status, that they are not used.
	Snippets bool

	// sliceIndex groups EndpointSlices by Service; built on first use.
	sliceIndex map[types.NamespacedName][]*discoveryv1.EndpointSlice
	// unreadable are the objects that do not decode, and why (AddUnreadable).
	unreadable map[ObjectRef]string
}

// NewInput returns an Input with every map allocated.
func NewInput(controllerName string) *Input {
	return &Input{
		ControllerName:     controllerName,
		GatewayClasses:     map[string]*gatewayv1.GatewayClass{},
		Gateways:           map[types.NamespacedName]*gatewayv1.Gateway{},
		ListenerSets:       map[types.NamespacedName]*gatewayv1.ListenerSet{},
		Routes:             map[string]map[types.NamespacedName]client.Object{},
		ReferenceGrants:    map[types.NamespacedName]*gatewayv1beta1.ReferenceGrant{},
		Namespaces:         map[string]*corev1.Namespace{},
		Services:           map[types.NamespacedName]*corev1.Service{},
		EndpointSlices:     map[types.NamespacedName]*discoveryv1.EndpointSlice{},
		Secrets:            map[types.NamespacedName]*corev1.Secret{},
		ConfigMaps:         map[types.NamespacedName]*corev1.ConfigMap{},
		BackendTLSPolicies: map[types.NamespacedName]*gatewayv1.BackendTLSPolicy{},
		NginxProxies:       map[types.NamespacedName]*v1alpha2.NginxProxy{},

		UnreadableNginxProxies: map[types.NamespacedName]*v1alpha2.NginxProxy{},

		Filters:    map[string]map[types.NamespacedName]client.Object{},
		Policies:   map[string]map[types.NamespacedName]v1alpha1.Policy{},
		APPolicies: map[types.NamespacedName]*plm.Status{},
		APLogConfs: map[types.NamespacedName]*plm.Status{},
		Bundles:    map[string]Bundle{},
	}
}

func key(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// Add puts an object into the snapshot; it returns false for kinds the graph
// does not use. An object marked with UnreadableAnnotation is a stub of one
// that does not decode: it is recorded as unreadable (AddUnreadable) and,
// for the kinds with stubs, added as the stub; the others (ReferenceGrant,
// NginxProxy, the PLM kinds) are only recorded: what refers to them reports
// them (an NginxProxy's stub is kept apart, for its own status:
// UnreadableNginxProxies).
func (in *Input) Add(obj any) bool {
	m, ok := obj.(metav1.Object)
	if !ok {
		return in.add(obj)
	}
	reason, marked := m.GetAnnotations()[UnreadableAnnotation]
	if !marked {
		return in.add(obj)
	}
	ref := ObjectRef{Kind: reflect.TypeOf(obj).Elem().Name(), Key: key(m.GetNamespace(), m.GetName())}
	switch o := obj.(type) {
	case *gatewayv1beta1.ReferenceGrant, *gatewayv1.ReferenceGrant:
	case *v1alpha2.NginxProxy:
		in.UnreadableNginxProxies[ref.Key] = o
	case *appprotectv1.APPolicy, *appprotectv1.APLogConf:
		if in.PLMGroup != appprotectv1.GroupVersion.Group {
			return false
		}
	case *wafv1alpha1.APPolicy, *wafv1alpha1.APLogConf:
		if in.PLMGroup != wafv1alpha1.GroupVersion.Group {
			return false
		}
	default:
		if !in.add(obj) {
			return false
		}
	}
	in.AddUnreadable(ref, reason)
	return true
}

// Route returns the input's route of a kind (graph.KindHTTPRoute...) and
// name, or nil.
func (in *Input) Route(kind string, k types.NamespacedName) client.Object {
	return in.Routes[kind][k]
}

// addRoute adds a route of a registered kind; false for other objects.
func (in *Input) addRoute(obj any) bool {
	o, ok := obj.(client.Object)
	if !ok {
		return false
	}
	kind := routekind.Of(o)
	if kind == nil {
		return false
	}
	if in.Routes[kind.Name] == nil {
		in.Routes[kind.Name] = map[types.NamespacedName]client.Object{}
	}
	in.Routes[kind.Name][key(o.GetNamespace(), o.GetName())] = o
	return true
}

// UnreadableAnnotation marks a stub of an object that does not decode into
// its Go type (see package unreadable): its value is why.
const UnreadableAnnotation = "gatewall.nginx.org/unreadable"

func (in *Input) add(obj any) bool {
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		in.GatewayClasses[o.Name] = o
	case *gatewayv1.Gateway:
		in.Gateways[key(o.Namespace, o.Name)] = o
	case *gatewayv1.ListenerSet:
		in.ListenerSets[key(o.Namespace, o.Name)] = o
	case *gatewayv1beta1.ReferenceGrant:
		in.ReferenceGrants[key(o.Namespace, o.Name)] = o
	case *gatewayv1.ReferenceGrant:
		// The same object in the Gateway API's v1 (standard since v1.5):
		// v1beta1's type is v1's.
		in.ReferenceGrants[key(o.Namespace, o.Name)] = (*gatewayv1beta1.ReferenceGrant)(o)
	case *corev1.Namespace:
		in.Namespaces[o.Name] = o
	case *corev1.Service:
		in.Services[key(o.Namespace, o.Name)] = o
	case *discoveryv1.EndpointSlice:
		in.EndpointSlices[key(o.Namespace, o.Name)] = o
		in.sliceIndex = nil
	case *corev1.Secret:
		in.Secrets[key(o.Namespace, o.Name)] = o
	case *corev1.ConfigMap:
		in.ConfigMaps[key(o.Namespace, o.Name)] = o
	case *gatewayv1.BackendTLSPolicy:
		in.BackendTLSPolicies[key(o.Namespace, o.Name)] = o
	case *v1alpha2.NginxProxy:
		in.NginxProxies[key(o.Namespace, o.Name)] = o
	case v1alpha1.Policy:
		in.addPolicy(o)
	case *appprotectv1.APPolicy:
		return in.addPLM(appprotectv1.GroupVersion.Group, in.APPolicies, key(o.Namespace, o.Name), &o.Status)
	case *appprotectv1.APLogConf:
		return in.addPLM(appprotectv1.GroupVersion.Group, in.APLogConfs, key(o.Namespace, o.Name), &o.Status)
	case *wafv1alpha1.APPolicy:
		return in.addPLM(wafv1alpha1.GroupVersion.Group, in.APPolicies, key(o.Namespace, o.Name), &o.Status)
	case *wafv1alpha1.APLogConf:
		return in.addPLM(wafv1alpha1.GroupVersion.Group, in.APLogConfs, key(o.Namespace, o.Name), &o.Status)
	default:
		return in.addRoute(obj) || in.addFilter(obj)
	}
	return true
}

// addPLM adds a PLM object of the group in use; objects of the other group
// are not used.
func (in *Input) addPLM(group string, m map[types.NamespacedName]*plm.Status, k types.NamespacedName, st *plm.Status) bool {
	if group != in.PLMGroup {
		return false
	}
	m[k] = st
	return true
}

// Bundle is what the fetcher has of one PLM bundle (by sha256).
type Bundle struct {
	State BundleState
	// Reason of a failure: FetchError or IntegrityError.
	Reason  string
	Message string
	// Data is the verified bundle when Fetched.
	Data      []byte
	FetchedAt metav1.Time
}

// BundleState is where a bundle is.
type BundleState int

// Bundle states.
const (
	BundlePending BundleState = iota
	BundleFetched
	BundleFailed
)

// PolicyKind is a policy's kind: the name of its Go type, which is its API
// kind for every type of package v1alpha1.
func PolicyKind(p v1alpha1.Policy) string {
	return reflect.TypeOf(p).Elem().Name()
}

func (in *Input) addPolicy(p v1alpha1.Policy) {
	kind := PolicyKind(p)
	if in.Policies[kind] == nil {
		in.Policies[kind] = map[types.NamespacedName]v1alpha1.Policy{}
	}
	in.Policies[kind][key(p.GetNamespace(), p.GetName())] = p
}
