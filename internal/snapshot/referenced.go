package snapshot

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
)

// Referenced reads the Secrets and ConfigMaps that Gateways, ListenerSets,
// policies and route filters reference. The manager caches only the
// metadata of Secrets and ConfigMaps: its watches see every tenant's, and
// in full they were as large as tenants made them. Referenced reads the
// content of a referenced one from the API server, and keeps it while some
// reader's last read needed it (a Gateway's last snapshot, a filter's last
// status), reading it again when the cached resourceVersion moves (so a
// rotated certificate or htpasswd takes effect without a restart, as
// before: the metadata watch wakes the Gateways that use it).
//
// The objects it returns are shared: nothing may modify them (translation
// only reads its input).
type Referenced struct {
	// meta reads the cached metadata (metav1.PartialObjectMetadata).
	meta client.Reader
	// api reads objects from the API server.
	api client.Reader

	mu sync.Mutex
	// objects are the content of the objects Gateways' snapshots read.
	objects map[graph.ObjectRef]client.Object
	// users are, per reader (a Gateway, a filter), the objects its last
	// read needed, and refs how many readers' last reads needed each object.
	users map[graph.ObjectRef]map[graph.ObjectRef]bool
	refs  map[graph.ObjectRef]int
}

// NewReferenced reads metadata from meta (the manager's cache) and content
// from api (the API server).
func NewReferenced(meta, api client.Reader) *Referenced {
	return &Referenced{meta: meta, api: api, objects: map[graph.ObjectRef]client.Object{},
		users: map[graph.ObjectRef]map[graph.ObjectRef]bool{}, refs: map[graph.ObjectRef]int{}}
}

// refReads are the objects one snapshot of a Gateway reads.
type refReads struct {
	r    *Referenced
	read map[graph.ObjectRef]bool
}

// reads starts a snapshot's reads; its done records them.
func (r *Referenced) reads() *refReads { return &refReads{r: r, read: map[graph.ObjectRef]bool{}} }

// secret returns a Secret's content; a Secret that does not exist is a
// NotFound error.
func (s *refReads) secret(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	o, err := s.get(ctx, graph.ObjectRef{Kind: "Secret", Key: key}, &corev1.Secret{})
	if err != nil {
		return nil, err
	}
	return o.(*corev1.Secret), nil
}

// configMap returns a ConfigMap's content; a ConfigMap that does not exist
// is a NotFound error.
func (s *refReads) configMap(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
	o, err := s.get(ctx, graph.ObjectRef{Kind: "ConfigMap", Key: key}, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	return o.(*corev1.ConfigMap), nil
}

func (s *refReads) get(ctx context.Context, k graph.ObjectRef, empty client.Object) (client.Object, error) {
	o, err := s.r.Get(ctx, k, empty)
	if err == nil {
		s.read[k] = true
	}
	return o, err
}

// done records what the snapshot of gw read (Referenced.retain).
func (s *refReads) done(gw types.NamespacedName) { s.r.retain(gatewayReader(gw), s.read) }

// gatewayReader is the reader of a Gateway's snapshots.
func gatewayReader(gw types.NamespacedName) graph.ObjectRef {
	return graph.ObjectRef{Kind: "Gateway", Key: gw}
}

// Secrets reads the Secrets an object other than a Gateway needs (a
// filter, for its status), keeping them as a Gateway's snapshot does
// until the object's next read, or ForgetReader. Secrets that do not
// exist are left out.
func (r *Referenced) Secrets(ctx context.Context, reader graph.ObjectRef, keys []types.NamespacedName) ([]*corev1.Secret, error) {
	reads := r.reads()
	defer func() { r.retain(reader, reads.read) }()
	var out []*corev1.Secret
	for _, k := range keys {
		s, err := reads.secret(ctx, k)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			out = append(out, s)
		}
	}
	return out, nil
}

// Get returns the content of k at the resourceVersion the cache has (or
// newer), from memory when it has that version, else into empty.
func (r *Referenced) Get(ctx context.Context, k graph.ObjectRef, empty client.Object) (client.Object, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(k.Kind))
	if err := r.meta.Get(ctx, k.Key, m); err != nil {
		if !apierrors.IsNotFound(err) {
			err = fmt.Errorf("reading the metadata of %s %s: %w", k.Kind, k.Key, err)
		}
		return nil, err
	}
	r.mu.Lock()
	o := r.objects[k]
	r.mu.Unlock()
	if o != nil && o.GetResourceVersion() == m.ResourceVersion {
		return o, nil
	}
	if err := r.api.Get(ctx, k.Key, empty); err != nil {
		if !apierrors.IsNotFound(err) {
			err = fmt.Errorf("reading %s %s: %w", k.Kind, k.Key, err)
		}
		return nil, err
	}
	r.mu.Lock()
	r.objects[k] = empty
	r.mu.Unlock()
	return empty, nil
}

// retain records the objects a Gateway's snapshot read, instead of those
// its previous snapshot read, and forgets the content of each object that
// no Gateway's last snapshot read any more. An object read by a snapshot
// still under way is kept: its snapshot's retain counts it. Nothing read
// forgets a deleted Gateway.
func (r *Referenced) retain(reader graph.ObjectRef, read map[graph.ObjectRef]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := r.users[reader]
	for k := range read {
		if !before[k] {
			r.refs[k]++
		}
	}
	for k := range before {
		if read[k] {
			continue
		}
		if r.refs[k]--; r.refs[k] <= 0 {
			delete(r.refs, k)
			delete(r.objects, k)
		}
	}
	if len(read) == 0 {
		delete(r.users, reader)
	} else {
		r.users[reader] = read
	}
}

// Forget forgets what the snapshots of a deleted Gateway read.
func (r *Referenced) Forget(gw types.NamespacedName) { r.retain(gatewayReader(gw), nil) }

// ForgetReader forgets what a deleted object other than a Gateway read
// (Secrets).
func (r *Referenced) ForgetReader(reader graph.ObjectRef) { r.retain(reader, nil) }

// held is how many objects' content r holds, for tests.
func (r *Referenced) held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.objects)
}
