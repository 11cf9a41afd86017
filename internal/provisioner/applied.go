package provisioner

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Applied remembers what Apply last wrote of each data-plane object and the
// resourceVersion the API server answered with. An object whose wanted
// content is the same and whose cached resourceVersion is still that one
// was changed by nobody since: applying it again would change nothing and
// cost a request (every reconcile of every Gateway applied all of its
// objects; under the client's rate limit that delayed changes reaching
// many Gateways). Drift changes the resourceVersion, so it is still
// reverted. Safe for concurrent use; the zero value is not: use NewApplied.
// A nil *Applied remembers nothing.
type Applied struct {
	mu   sync.Mutex
	last map[appliedKey]appliedState
}

type appliedKey struct {
	kind string
	name types.NamespacedName
}

type appliedState struct {
	digest          [sha256.Size]byte
	resourceVersion string
}

// NewApplied makes an empty memory of applied objects.
func NewApplied() *Applied { return &Applied{last: map[appliedKey]appliedState{}} }

// digestOf is the digest of what Apply sends for an object.
func digestOf(u *unstructured.Unstructured) ([sha256.Size]byte, error) {
	b, err := json.Marshal(u.Object) // map keys are sorted
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// unchanged says whether key was applied with digest and have (the cached
// object, nil if none) still has the resourceVersion Apply got back.
func (a *Applied) unchanged(key appliedKey, digest [sha256.Size]byte, have client.Object) bool {
	if a == nil || have == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st, ok := a.last[key]
	return ok && st.digest == digest && st.resourceVersion != "" && st.resourceVersion == have.GetResourceVersion()
}

func (a *Applied) record(key appliedKey, digest [sha256.Size]byte, resourceVersion string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last[key] = appliedState{digest: digest, resourceVersion: resourceVersion}
}

func (a *Applied) forget(key appliedKey) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.last, key)
}
