package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// RateLimitPolicyAffected is the condition type Gatewall sets on every
// Gateway, HTTPRoute and GRPCRoute affected by a RateLimitPolicy.
const RateLimitPolicyAffected = "gateway.nginx.org/RateLimitPolicyAffected"

// RateLimitPolicy is an inherited policy (GEP-713) that limits the rate of
// requests NGINX accepts, per client or per any other key (NGINX's limit_req
// module). A policy on a Gateway is the default for every route attached to
// it; a policy on an HTTPRoute or GRPCRoute overrides the Gateway's field by
// field, its rules as a whole. The object is the same as NGINX Gateway
// Fabric's RateLimitPolicy, so its manifests apply unchanged.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api,scope=Namespaced,shortName=rlpolicy;ratelimit
// +kubebuilder:printcolumn:name="Rate",type=string,JSONPath=`.spec.rateLimit.local.rules[0].rate`,description="The rate of the first rule"
// +kubebuilder:printcolumn:name="Dry Run",type=boolean,JSONPath=`.spec.rateLimit.dryRun`,description="Whether requests are only counted, not limited"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=inherited"
type RateLimitPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired state of the RateLimitPolicy.
	Spec RateLimitPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor (Gateway), as set by Gatewall.
	// +optional
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// RateLimitPolicySpec defines the desired state of a RateLimitPolicy.
type RateLimitPolicySpec struct {
	// RateLimit is the rate limiting the policy applies to its targets.
	//
	// +optional
	RateLimit *RateLimit `json:"rateLimit,omitempty"`

	// TargetRefs are the Gateways, or the HTTPRoutes and GRPCRoutes, in the
	// policy's own namespace that the policy applies to. One policy targets
	// either Gateways or routes, never both. Each target appears at most once.
	// A route's policy overrides the policy of the Gateways the route is
	// attached to.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="TargetRef Kind must be one of: Gateway, HTTPRoute, or GRPCRoute",rule="self.all(t, t.kind == 'Gateway' || t.kind == 'HTTPRoute' || t.kind == 'GRPCRoute')"
	// +kubebuilder:validation:XValidation:message="TargetRef Group must be gateway.networking.k8s.io",rule="self.all(t, t.group == 'gateway.networking.k8s.io')"
	// +kubebuilder:validation:XValidation:message="TargetRef Kind and Name combination must be unique",rule="self.all(t1, self.exists_one(t2, t1.kind == t2.kind && t1.name == t2.name))"
	// +kubebuilder:validation:XValidation:message="Cannot mix Gateway kind with HTTPRoute or GRPCRoute kinds in targetRefs",rule="!(self.exists(t, t.kind == 'Gateway') && self.exists(t, t.kind == 'HTTPRoute' || t.kind == 'GRPCRoute'))"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`
}

// RateLimit is the rate limiting of a policy. Every unset field is inherited:
// from the Gateway's policy for a route policy, else from NGINX's defaults.
type RateLimit struct {
	// Local is the rate limiting each NGINX instance applies on its own: every
	// replica of the data plane counts the requests it receives.
	//
	// +optional
	Local *LocalRateLimit `json:"local,omitempty"`

	// DryRun, when true, has NGINX count requests against the limits and log
	// those over them, but serve them all: nothing is delayed or rejected. Use
	// it to try limits out on real traffic. NGINX's default is false.
	// NGINX directive: limit_req_dry_run.
	//
	// +optional
	DryRun *bool `json:"dryRun,omitempty"`

	// LogLevel is the level at which NGINX logs the requests it rejects for
	// being over a limit; requests it only delays are logged one level lower
	// (notice for warn, for instance). One of info, notice, warn or error.
	// NGINX's default is error. NGINX directive: limit_req_log_level.
	//
	// +optional
	LogLevel *RateLimitLogLevel `json:"logLevel,omitempty"`

	// RejectCode is the HTTP status code NGINX answers a rejected request
	// with, from 400 to 599; 429 (Too Many Requests) is the usual choice.
	// NGINX's default is 503 (Service Unavailable).
	// NGINX directive: limit_req_status.
	//
	// +optional
	// +kubebuilder:validation:Minimum=400
	// +kubebuilder:validation:Maximum=599
	RejectCode *int32 `json:"rejectCode,omitempty"`
}

// LocalRateLimit is the list of limits each NGINX instance applies.
type LocalRateLimit struct {
	// Rules are the limits; a request must be within every one of them. Each
	// rule of a policy counts in one zone, shared by all the policy's targets
	// and their routes. A route policy that sets local replaces the Gateway
	// policy's rules as a whole: with no rules (local: {} or an empty list)
	// it lifts the Gateway's limits from the route. At
	// most 16 rules: the bound keeps the cost of the CRD's validation rules,
	// which run on every rule, within the API server's budget.
	//
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Rules []RateLimitRule `json:"rules,omitempty"`
}

// RateLimitRule is one limit: a rate of requests per value of a key, with a
// shared memory zone that holds the state of each value. NGINX directives:
// limit_req_zone (key, zoneSize, rate) and limit_req (burst, delay,
// noDelay).
//
// +kubebuilder:validation:XValidation:message="NoDelay cannot be true when Delay is also set",rule="!(has(self.noDelay) && has(self.delay) && self.noDelay == true)"
type RateLimitRule struct {
	// ZoneSize is the size of the shared memory zone holding the state of each
	// key value; a 1m zone holds about 16 thousand values of
	// $binary_remote_addr. When the zone is full NGINX drops the least
	// recently used values, and rejects a request when it cannot make room. A
	// size of up to 4 digits with an optional k, m or g, from 32k (NGINX
	// refuses a zone smaller than 8 memory pages) to 1g (NGINX maps the whole
	// zone when it reads its configuration). When unset, Gatewall gives the
	// zone 10m. The zones of a Gateway's RateLimitPolicies together may not
	// exceed 192m: the policies that use them first (the oldest) keep
	// them, and a newer policy whose zones would not fit is refused on that
	// Gateway (Accepted=False, OverBudget).
	//
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:message="zoneSize must be at least 32k: NGINX refuses a limit_req zone smaller than 8 memory pages",rule="!self.matches('^[0-9]{1,4}[kmg]?$') || int(self.find('^[0-9]+')) * (self.endsWith('g') ? 1073741824 : self.endsWith('m') ? 1048576 : self.endsWith('k') ? 1024 : 1) >= 32768"
	// +kubebuilder:validation:XValidation:message="zoneSize must be at most 1g: NGINX maps the zone in shared memory when it reads its configuration",rule="!self.matches('^[0-9]{1,4}[kmg]?$') || int(self.find('^[0-9]+')) * (self.endsWith('g') ? 1073741824 : self.endsWith('m') ? 1048576 : self.endsWith('k') ? 1024 : 1) <= 1073741824"
	ZoneSize *ByteSize `json:"zoneSize,omitempty"`

	// Delay is how many requests over the rate, within burst, NGINX serves at
	// once before it starts delaying the next ones to keep to the rate. It
	// cannot be set together with noDelay true. NGINX's default is 0: every
	// request over the rate is delayed.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	Delay *int32 `json:"delay,omitempty"`

	// NoDelay, when true, has NGINX serve the requests over the rate, within
	// burst, at once instead of delaying them; the burst allowance then
	// refills at the rate. It cannot be true when delay is set. NGINX's
	// default is false.
	//
	// +optional
	NoDelay *bool `json:"noDelay,omitempty"`

	// Burst is how many requests over the rate NGINX accepts from one key
	// value (and delays, unless noDelay or delay says otherwise); any request
	// beyond them is rejected with rejectCode. NGINX's default is 0: every
	// request over the rate is rejected.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	Burst *int32 `json:"burst,omitempty"`

	// Rate is how many requests one key value may make, per second or per
	// minute: a whole number from 1 to 999999999 followed by r/s or r/m, such
	// as 10r/s or 30r/m. NGINX enforces it by the millisecond: 10r/s is one
	// request every 100ms, unless burst allows more.
	Rate Rate `json:"rate"`

	// Key is what requests are counted by: NGINX keeps one count per value of
	// the key, and does not limit requests whose key is empty. It is text and
	// NGINX variables, such as $binary_remote_addr (per client address) or
	// user:$http_x_user, of at most 256 characters, without spaces, tabs, line
	// breaks, ;, {, }, #, ", ' or \. A $ starts a variable, whose name is every
	// letter, digit and underscore after it: write $host:$uri, not $host_uri.
	// The variables allowed are $binary_remote_addr, $remote_addr,
	// $remote_user, $server_name, $host, $scheme, $request_method, $uri,
	// $request_uri, $args, $server_port, and $http_<header> (the header's name
	// in lower case with - written as _, such as $http_x_api_key),
	// $arg_<query parameter> and $cookie_<cookie name>.
	//
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(?:[^ \t\r\n;{}#$]+|\$\w+)+$`
	// +kubebuilder:validation:XValidation:message=`key must not contain ", ' or \: they change how NGINX reads the key`,rule=`!self.matches('["\'\\\\]')`
	// +kubebuilder:validation:XValidation:message="key may only use the variables $binary_remote_addr, $remote_addr, $remote_user, $server_name, $host, $scheme, $request_method, $uri, $request_uri, $args, $server_port, $http_<name>, $arg_<name> and $cookie_<name>",rule="self.matches('^([^$]|([$]((http|arg|cookie)_[A-Za-z0-9_]+|binary_remote_addr|remote_addr|remote_user|server_name|host|scheme|request_method|uri|request_uri|args|server_port))+([^$A-Za-z0-9_]|$))*$')"
	Key string `json:"key"`
}

// Rate is a number of requests per second (r/s) or per minute (r/m): 10r/s,
// 30r/m. The number is from 1 to 999999999, without leading zeros.
//
// +kubebuilder:validation:Pattern=`^\d+r/[sm]$`
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:message="rate must be a number of requests from 1 to 999999999, without leading zeros, per second (r/s) or per minute (r/m)",rule="!self.matches('^[0-9]+r/[sm]$') || self.matches('^[1-9][0-9]{0,8}r/')"
type Rate string

// RateLimitLogLevel is the level of NGINX's log messages about limited
// requests: info, notice, warn or error.
//
// +kubebuilder:validation:Enum=info;notice;warn;error
type RateLimitLogLevel string

// Rate limit log levels.
const (
	// RateLimitLogLevelInfo logs rejected requests at level info.
	RateLimitLogLevelInfo RateLimitLogLevel = "info"
	// RateLimitLogLevelNotice logs rejected requests at level notice.
	RateLimitLogLevelNotice RateLimitLogLevel = "notice"
	// RateLimitLogLevelWarn logs rejected requests at level warn.
	RateLimitLogLevelWarn RateLimitLogLevel = "warn"
	// RateLimitLogLevelError logs rejected requests at level error.
	RateLimitLogLevelError RateLimitLogLevel = "error"
)

// RateLimitPolicyList is a list of RateLimitPolicies.
//
// +kubebuilder:object:root=true
type RateLimitPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RateLimitPolicy `json:"items"`
}

// PolicyTargetRefs are the policy's targetRefs.
func (p *RateLimitPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return p.Spec.TargetRefs
}

func init() {
	SchemeBuilder.Register(&RateLimitPolicy{}, &RateLimitPolicyList{})
}
