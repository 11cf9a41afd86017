package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// corsMaxAgeDefault is the default of an HTTPRoute CORS filter's maxAge in
// the Gateway API's schema.
const corsMaxAgeDefault = 5

// apiServerDefaults fills in the schema defaults the API server would set
// before Gatewall reads an object:
//   - where the Go type cannot tell an unset field from its zero value: the
//     graph refuses such a zero (it can only come from an object that
//     bypassed the schema), so a manifest that leaves the field unset must
//     get the default, as it would in a cluster. Only HTTPRoute CORS
//     filters' maxAge is such a field;
//   - routes' parentRef group and kind, which route statuses repeat: the
//     preview shows them as a cluster would.
//
// Objects are changed in place; values of the wrong shape are left for
// decoding to refuse.
func apiServerDefaults(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group != gatewayv1.GroupName {
		return
	}
	spec, _ := u.Object["spec"].(map[string]any)
	switch gvk.Kind {
	case "HTTPRoute", "GRPCRoute", "TLSRoute":
		parentRefDefaults(spec)
	}
	if gvk.Kind != "HTTPRoute" {
		return
	}
	rules, _ := spec["rules"].([]any) // not NestedSlice: it copies
	for _, r := range rules {
		rule, ok := r.(map[string]any)
		if !ok {
			continue
		}
		filters, _ := rule["filters"].([]any)
		for _, f := range filters {
			filter, ok := f.(map[string]any)
			if !ok {
				continue
			}
			if cors, ok := filter["cors"].(map[string]any); ok {
				if _, set := cors["maxAge"]; !set {
					cors["maxAge"] = int64(corsMaxAgeDefault)
				}
			}
		}
	}
}

// parentRefDefaults sets a route's parentRefs' group and kind when unset,
// as the Gateway API's schema does.
func parentRefDefaults(spec map[string]any) {
	refs, _ := spec["parentRefs"].([]any)
	for _, r := range refs {
		ref, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if _, set := ref["group"]; !set {
			ref["group"] = gatewayv1.GroupName
		}
		if _, set := ref["kind"]; !set {
			ref["kind"] = "Gateway"
		}
	}
}
