package graph

import "k8s.io/apimachinery/pkg/types"

// ObjectRef names an object by kind and namespace/name (no namespace for
// cluster-scoped kinds). It is Gatewall's one key for objects of mixed
// kinds: unreadable objects of a snapshot, policy targets, routes'
// include files, route status writes, objects read on demand.
type ObjectRef struct {
	Kind string
	Key  types.NamespacedName
}

func (r ObjectRef) String() string {
	if r.Key.Namespace == "" {
		return r.Kind + " " + r.Key.Name
	}
	return r.Kind + " " + r.Key.String()
}
