package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Messages of the targetRefs rules, identical to the CRDs' CEL messages.
const (
	MsgTargetKinds  = "TargetRefs entries must have kind Gateway, HTTPRoute, or GRPCRoute"
	MsgTargetGroup  = "TargetRefs entries must have group gateway.networking.k8s.io"
	MsgTargetUnique = "TargetRefs must be unique"
	MsgTargetMixed  = "TargetRefs cannot mix Gateway with HTTPRoute or GRPCRoute"
)

// TargetRefs checks the targetRefs of an inherited policy: 1 to 16 entries,
// group gateway.networking.k8s.io, kind Gateway, HTTPRoute or GRPCRoute, and
// each kind+name once.
func TargetRefs(path *field.Path, refs []gatewayv1.LocalPolicyTargetReference) field.ErrorList {
	return targetRefList(path, refs, targetRules{
		kind:  func(r gatewayv1.LocalPolicyTargetReference) bool { return TargetKind(r.Kind) },
		group: func(r gatewayv1.LocalPolicyTargetReference) bool { return r.Group == v1alpha1.TargetGroup },
		key:   func(r gatewayv1.LocalPolicyTargetReference) string { return string(r.Kind) + "/" + string(r.Name) },
		msgs:  [3]string{MsgTargetKinds, MsgTargetGroup, MsgTargetUnique},
	})
}

// targetRules are what one kind of policy allows in its targetRefs: kinds,
// groups, what makes two entries the same, and the messages for each (kind,
// group, unique).
type targetRules struct {
	kind, group func(gatewayv1.LocalPolicyTargetReference) bool
	key         func(gatewayv1.LocalPolicyTargetReference) string
	msgs        [3]string
}

// targetRefList checks a targetRefs list: 1 to 16 entries, each name an
// ObjectName, and each entry of an allowed kind and group, once.
func targetRefList(path *field.Path, refs []gatewayv1.LocalPolicyTargetReference, rules targetRules) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(refs) == 0:
		errs = append(errs, field.Invalid(path, len(refs), "should have at least 1 items"))
	case len(refs) > v1alpha1.MaxTargetRefs:
		errs = append(errs, field.TooMany(path, len(refs), v1alpha1.MaxTargetRefs))
	}
	seen := make(map[string]bool, len(refs))
	ok := [3]bool{true, true, true}
	for i, r := range refs {
		errs = append(errs, objectName(path.Index(i).Child("name"), string(r.Name))...)
		ok[0] = ok[0] && rules.kind(r)
		ok[1] = ok[1] && rules.group(r)
		k := rules.key(r)
		ok[2] = ok[2] && !seen[k]
		seen[k] = true
	}
	for i, msg := range rules.msgs {
		if !ok[i] {
			errs = append(errs, field.Invalid(path, "array", msg))
		}
	}
	return errs
}

// TargetKind says whether an inherited policy may target objects of a kind.
func TargetKind(k gatewayv1.Kind) bool {
	switch k {
	case v1alpha1.KindGateway, v1alpha1.KindHTTPRoute, v1alpha1.KindGRPCRoute:
		return true
	}
	return false
}

// TargetRefsNotMixed checks that targetRefs are all Gateways or all routes,
// the rule WAFGatewayBindingPolicy adds to TargetRefs.
func TargetRefsNotMixed(path *field.Path, refs []gatewayv1.LocalPolicyTargetReference) field.ErrorList {
	gateways := 0
	for _, r := range refs {
		if r.Kind == v1alpha1.KindGateway {
			gateways++
		}
	}
	if gateways > 0 && gateways < len(refs) {
		return field.ErrorList{field.Invalid(path, "array", MsgTargetMixed)}
	}
	return nil
}
