package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/routekind"
)

// apiServerDefaults fills in the schema defaults the API server would set
// before Gatewall reads an object that route statuses repeat: routes'
// parentRef group and kind, so the preview shows them as a cluster would.
// (A default the graph needs, such as a CORS filter's maxAge, the graph
// applies itself: an API server whose CRD lacks it stores the field unset.)
//
// Objects are changed in place; values of the wrong shape are left for
// decoding to refuse.
func apiServerDefaults(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group != gatewayv1.GroupName {
		return
	}
	spec, _ := u.Object["spec"].(map[string]any)
	if routekind.Named(gvk.Kind) != nil {
		parentRefDefaults(spec)
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
