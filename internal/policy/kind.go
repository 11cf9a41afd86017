package policy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Kind is one policy kind the engine evaluates. Everything outside this
// package (watches, snapshots, reconcilers, the render command, status
// conditions on targets) goes through Kinds, so adding a kind is its API
// type, its validation, its file here and one line in Kinds.
type Kind interface {
	// Name is the API kind, e.g. "ProxySettingsPolicy".
	Name() string
	// AffectedType is the condition type set on every target it affects.
	AffectedType() string
	// NewObject and NewList are empty objects of the kind, for watches and lists.
	NewObject() client.Object
	NewList() client.ObjectList
	// View is a policy object of the kind as the engine reads it: its
	// targets and its Gateway API PolicyStatus, sharing the object. A
	// Gatewall kind is its own view; a Gateway API kind is wrapped.
	View(obj client.Object) v1alpha1.PolicyWithStatus
	// Policies are the kind's policies in a snapshot, as views.
	Policies(in *graph.Input) []v1alpha1.PolicyWithStatus
	// Targets are the kinds of object its policies can target.
	Targets() TargetKinds
	// TargetsField is the spec field that holds the targets
	// ("targetRefs", or "targetRef" for a single one).
	TargetsField() string
	// Validate re-checks a policy of the kind as the engine does: the CRD's
	// rules and what NGINX would reject whatever the policy's targets.
	Validate(p v1alpha1.Policy) error
	// Evaluate attaches the kind's policies of a snapshot to one Gateway.
	Evaluate(g *Gateway, in *graph.Input) Attachment
	// Reads are the kinds of object, beyond Gateways, routes and the
	// kind's targets, whose changes can change its policies' outcomes:
	// "NginxProxy", "ReferenceGrant", "ConfigMap", "APPolicy", "APLogConf"
	// (the PLM kinds: only their bundle and processing status count).
	Reads() []string
}

// gatewallKind is what the kinds of Gatewall's own API share: their objects
// are their own views, and the snapshot holds them in Policies.
type gatewallKind string

func (k gatewallKind) Name() string { return string(k) }

func (gatewallKind) View(obj client.Object) v1alpha1.PolicyWithStatus {
	return obj.(v1alpha1.PolicyWithStatus)
}

func (k gatewallKind) Policies(in *graph.Input) []v1alpha1.PolicyWithStatus {
	out := make([]v1alpha1.PolicyWithStatus, 0, len(in.Policies[string(k)]))
	for _, p := range in.Policies[string(k)] {
		out = append(out, p.(v1alpha1.PolicyWithStatus))
	}
	return out
}

// OwnStatus is a Kind whose status holds more than the ancestors
// (WAFGatewayBindingPolicy: the bundles in force). The engine sets the
// ancestors; SetOwnStatus sets the rest.
type OwnStatus interface {
	// SetOwnStatus sets the rest of p's status. p holds its ancestors as
	// they are to be written, and the rest as written last; gateways are
	// the kind's attachments to every Gateway translated for p.
	SetOwnStatus(p v1alpha1.PolicyWithStatus, gateways []Attachment, in *graph.Input, now metav1.Time)
}

// Unprogrammed is a Kind whose API has no Programmed condition
// (BackendTLSPolicy: Accepted and ResolvedRefs): its statuses are written
// as if every outcome had NoProgrammed.
type Unprogrammed interface {
	NoProgrammed()
}

// Attachment is one kind's attachment to one Gateway.
type Attachment interface {
	// PolicyOutcomes are the outcomes of the policies that have the
	// Gateway as an ancestor.
	PolicyOutcomes() map[types.NamespacedName]*Outcome
	// Affects says whether the rendered settings change a target (the
	// Gateway or a route): it gets the kind's Affected condition.
	Affects(ref graph.ObjectRef) bool
	// AddIncludes adds the rendered settings to the Gateway's configuration.
	AddIncludes(inc *config.Includes)
}

// Holder is an Attachment that can hold its Gateway's configuration back:
// pushing it would drop what the data plane enforces and the control plane
// lacks (WAFGatewayBindingPolicy: bundles in force). The Gateway's data
// plane then keeps the configuration it runs, and statuses say why.
type Holder interface {
	// HeldBack says why the configuration must wait, sorted; none when it
	// need not.
	HeldBack() []string
}

// Describer is an Attachment that says how it affects a target, in the
// message of the target's <Kind>Affected condition (WAFGatewayBindingPolicy:
// which policy protects it, its own or its Gateway's, and which bundle).
type Describer interface {
	// AffectedMessage is the message for a target it Affects; "" keeps the
	// default one.
	AffectedMessage(ref graph.ObjectRef) string
}

// Explainer is an Attachment that can say what the data plane's refusal of
// a configuration means for it (WAFGatewayBindingPolicy: NGINX that cannot
// load the App Protect module runs an image without it).
type Explainer interface {
	// ExplainRefusal returns what to add to the data plane's message, ""
	// when it has nothing to add.
	ExplainRefusal(message string) string
}

// Kinds are the policy kinds the engine evaluates, in the order their
// <Kind>Affected conditions appear on targets.
var Kinds = []Kind{
	proxySettingsKind,
	clientSettingsKind,
	rateLimitKind,
	upstreamSettingsKind,
	wafKind,
	backendTLSKind,
	snippetsKind,
}

// KindNamed returns the registered kind with that name, or nil.
func KindNamed(name string) Kind {
	for _, k := range Kinds {
		if k.Name() == name {
			return k
		}
	}
	return nil
}

// Outcome is what one policy gets for one ancestor Gateway.
type Outcome struct {
	Policy     types.NamespacedName
	Generation int64
	// Accepted is the Accepted condition for this ancestor.
	Accepted metav1.Condition
	// Partial says which of the policy's fields do not take effect here;
	// "" when all do. It makes Programmed False with reason PartiallyInvalid.
	Partial string
	// ResolvedRefs, when set, is the policy's ResolvedRefs condition.
	ResolvedRefs *metav1.Condition
	// Blocked, when set, is why the policy's configuration cannot be
	// programmed whatever the data plane does (e.g. a bundle not fetched):
	// Programmed is False with it.
	Blocked *metav1.Condition
	// DeploymentReason is the Programmed reason when the data plane rejects
	// the configuration ("" for the Gateway API's Invalid).
	DeploymentReason string
	// NoProgrammed leaves out the Programmed condition, for a kind whose API
	// has none (BackendTLSPolicy: Accepted and ResolvedRefs).
	NoProgrammed bool
}

// Result is one kind's attachment to one Gateway.
type Result struct {
	// Outcomes of the policies that have this Gateway as an ancestor.
	Outcomes map[types.NamespacedName]*Outcome
	// HTTP are the directives at http level (the Gateway's policies, and
	// any defaults the kind pins).
	HTTP []config.Directive
	// Routes are the directives for every location of a route.
	Routes map[graph.ObjectRef][]config.Directive
	// Affected are the Gateway and routes the rendered settings change.
	Affected map[graph.ObjectRef]bool
	// Upstreams are the settings of the upstreams of each Service.
	Upstreams map[types.NamespacedName]*config.UpstreamSettings
	// include names the kind's include files.
	include string
}

// PolicyOutcomes are the outcomes of the policies that have the Gateway as
// an ancestor.
func (r *Result) PolicyOutcomes() map[types.NamespacedName]*Outcome { return r.Outcomes }

// Affects says whether the rendered settings change a target.
func (r *Result) Affects(ref graph.ObjectRef) bool { return r.Affected[ref] }

func newResult(include string) *Result {
	return &Result{Outcomes: map[types.NamespacedName]*Outcome{}, Routes: map[graph.ObjectRef][]config.Directive{},
		Affected: map[graph.ObjectRef]bool{}, include: include}
}

// AddIncludes adds the rendered settings to a Gateway's configuration.
func (r *Result) AddIncludes(inc *config.Includes) {
	inc.AddHTTP(config.IncludesDir+r.include+".conf", r.HTTP)
	for ref, dirs := range r.Routes {
		rk := ref
		inc.AddRoute(rk, config.RouteIncludePath(r.include, rk), dirs)
	}
	for svc, set := range r.Upstreams {
		if inc.Upstreams == nil {
			inc.Upstreams = map[types.NamespacedName]*config.UpstreamSettings{}
		}
		inc.Upstreams[svc] = set
	}
}
