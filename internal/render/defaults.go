package render

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/routekind"
)

// apiServerDefaults does what the API server would do to an object on
// write before Gatewall reads it: a Secret's stringData merged into its
// data, and the schema defaults route statuses repeat (routes' parentRef
// group and kind), so the preview shows them as a cluster would.
// (A default the graph needs, such as a CORS filter's maxAge, the graph
// applies itself: an API server whose CRD lacks it stores the field unset.)
//
// Objects are changed in place; values of the wrong shape are left for
// decoding to refuse.
func apiServerDefaults(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" && gvk.Kind == "Secret" {
		secretStringData(u.Object)
		return
	}
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

// secretStringData merges a Secret's stringData into its data, as the API
// server does on write (a key in both takes stringData's value), so that
// a manifest written with stringData renders as it serves. A value that
// is not a string is left for decoding to refuse.
func secretStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for _, v := range sd {
		if _, ok := v.(string); !ok {
			return
		}
	}
	for k, v := range sd {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	obj["data"] = data
	delete(obj, "stringData")
}
