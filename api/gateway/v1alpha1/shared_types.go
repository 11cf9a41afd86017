package v1alpha1

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// Kinds a Gatewall policy may target, all in the gateway.networking.k8s.io group.
const (
	// TargetGroup is the only group a policy target may have.
	TargetGroup = gatewayv1.GroupName
	// KindGateway is the kind of a Gateway target.
	KindGateway = "Gateway"
	// KindHTTPRoute is the kind of an HTTPRoute target.
	KindHTTPRoute = "HTTPRoute"
	// KindGRPCRoute is the kind of a GRPCRoute target.
	KindGRPCRoute = "GRPCRoute"
	// MaxTargetRefs is the most targets one policy may have.
	MaxTargetRefs = 16
)

// PolicyLabel marks a CRD as a GEP-713 policy; its value says which kind.
const (
	PolicyLabelKey       = "gateway.networking.k8s.io/policy"
	PolicyLabelInherited = "inherited"
)

// Condition types, reasons and messages shared by Gatewall's policies, beyond
// those of the Gateway API (Accepted, Conflicted, Invalid, TargetNotFound).
const (
	// PolicyConditionProgrammed says whether the data plane applied the policy.
	PolicyConditionProgrammed = "Programmed"
	// PolicyConditionResolvedRefs says whether the policy's references resolved.
	PolicyConditionResolvedRefs = "ResolvedRefs"

	// PolicyReasonProgrammed: the data plane applied the policy.
	PolicyReasonProgrammed = "Programmed"
	// PolicyReasonPending: the configuration is not yet applied by the data plane.
	PolicyReasonPending = "Pending"
	// PolicyReasonPartiallyInvalid: some fields of the policy cannot take effect.
	PolicyReasonPartiallyInvalid = "PartiallyInvalid"
	// PolicyReasonAffected is the reason of the <Kind>Affected condition on targets.
	PolicyReasonAffected = "PolicyAffected"
)

// ByteSize is a size in bytes, or in kilobytes, megabytes or gigabytes with
// the suffix k, m or g (lower case), with at most 4 digits: 1024, 8k, 10m, 1g.
// It is NGINX Gateway Fabric's Size; Gatewall's own Size (ProxySettingsPolicy)
// is a different type.
//
// +kubebuilder:validation:Pattern=`^\d{1,4}(k|m|g)?$`
type ByteSize string

// Duration is a length of time of at most 4 digits, in milliseconds (ms),
// seconds (s), minutes (m) or hours (h); a number without a suffix is in
// seconds: 500ms, 60s, 5m, 1h, 30.
//
// +kubebuilder:validation:Pattern=`^[0-9]{1,4}(ms|s|m|h)?$`
type Duration string

// SpanAttribute is a key and value added to a tracing span (NGINX Gateway
// Fabric's). Both are written in double quotes: a '"' must be escaped with
// '\', and '$' (a variable) is refused.
type SpanAttribute struct {
	// Key is the attribute's key.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^([^"$\\]|\\[^$])*$`
	Key string `json:"key"`

	// Value is the attribute's value.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^([^"$\\]|\\[^$])*$`
	Value string `json:"value"`
}
