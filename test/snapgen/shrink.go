package snapgen

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListItems counts the list elements of the snapshot's objects (listeners,
// rules, matches, filters, backendRefs, hostnames…), which
// WithoutListItem removes one at a time to shrink a failing snapshot.
func (s *Snapshot) ListItems() int {
	n := 0
	for _, o := range s.Objects {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			continue
		}
		walkLists(u, func([]any, int) bool { n++; return false })
	}
	return n
}

// WithoutListItem returns the snapshot without the n-th list element
// (counted as ListItems counts them), or nil when n is out of range.
func (s *Snapshot) WithoutListItem(n int) *Snapshot {
	out := &Snapshot{ControllerName: s.ControllerName, Bundles: s.Bundles}
	done := false
	for _, o := range s.Objects {
		if done {
			out.Objects = append(out.Objects, o)
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			out.Objects = append(out.Objects, o)
			continue
		}
		done = walkLists(u, func(list []any, i int) bool {
			if n > 0 {
				n--
				return false
			}
			return true
		})
		if !done {
			out.Objects = append(out.Objects, o)
			continue
		}
		c := o.DeepCopyObject().(client.Object)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, c); err != nil {
			return nil
		}
		out.Objects = append(out.Objects, c)
	}
	if !done {
		return nil
	}
	return out
}

// walkLists visits the elements of every list in v, depth first, map keys
// in order; when visit returns true the element is removed and the walk
// stops, returning true.
func walkLists(v any, visit func(list []any, i int) bool) bool {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if list, ok := v[k].([]any); ok {
				for i := range list {
					if visit(list, i) {
						v[k] = append(list[:i:i], list[i+1:]...)
						return true
					}
					if walkLists(list[i], visit) {
						return true
					}
				}
				continue
			}
			if walkLists(v[k], visit) {
				return true
			}
		}
	}
	return false
}
