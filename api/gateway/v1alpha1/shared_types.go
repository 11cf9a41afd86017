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
