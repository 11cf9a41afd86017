package node

import (
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
