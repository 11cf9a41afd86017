package manager

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/gatewall/gatewall/internal/provisioner"
)

// metadataOnly are the kinds the manager caches as metadata only. Its
// watches see every one in the cluster, as many and as large as any tenant
// makes them (a Secret or ConfigMap up to 1 MiB of data, and kubectl's copy
// of it in an annotation); held whole, they could exhaust the manager's
// memory. Gatewall needs the content of the few that Gateways, ListenerSets
// and policies reference (snapshot.Referenced reads those from the API
// server) and the metadata of its own data-plane objects.
var metadataOnly = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("Secret"):         true,
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):      true,
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"): true,
	// Data-plane kinds whose spec and status nothing reads back.
	autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"): true,
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"):          true,
}

// cacheOptions are the manager's cache options: every object without what
// Gatewall never reads of it (stripUnread), the metadata-only kinds reduced
// to the metadata Gatewall reads (slimMetadata), Deployments and DaemonSets
// to that metadata and their status (deploymentStatus, daemonSetStatus).
func cacheOptions(s *runtime.Scheme) (cache.Options, error) {
	byObject := map[client.Object]cache.ByObject{&appsv1.Deployment{}: {Transform: deploymentStatus}, &appsv1.DaemonSet{}: {Transform: daemonSetStatus}}
	for gvk := range metadataOnly {
		obj, err := s.New(gvk)
		if err != nil {
			return cache.Options{}, err
		}
		byObject[obj.(client.Object)] = cache.ByObject{Transform: slimMetadata}
	}
	return cache.Options{DefaultTransform: stripUnread, ByObject: byObject}, nil
}

// lastApplied is the annotation where kubectl apply keeps a copy of the
// object it applied.
const lastApplied = corev1.LastAppliedConfigAnnotation

// stripUnread drops from a cached object what Gatewall never reads:
// managedFields (server-side apply sends what Gatewall wants; unchanged
// objects are found by resourceVersion) and kubectl's last-applied copy of
// the object. At thousands of routes applied with kubectl, these were most
// of the manager's memory. Status writes keep them: the API server takes
// only the status from a status update.
func stripUnread(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil
	}
	// Checked for nil: setting nil managed fields on an object without
	// them is not a no-op (kubernetes/kubernetes#124337).
	if obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	if _, ok := obj.GetAnnotations()[lastApplied]; ok {
		a := obj.GetAnnotations()
		delete(a, lastApplied)
		obj.SetAnnotations(a)
	}
	return in, nil
}

// Metadata that slimMetadata keeps: what finds and recognizes data-plane
// objects (provisioner.Owner.Owns, provisioner.Remove) and wakes their
// Gateway (the controller owner reference).
var (
	keptLabels      = []string{provisioner.GatewayNameLabel, provisioner.GatewayClassLabel, provisioner.ManagedByLabel}
	keptAnnotations = []string{provisioner.ControllerAnnotation}
)

// slimMetadata reduces a metadata-only object to the metadata Gatewall
// reads: a tenant's labels, annotations (kubectl's last-applied copy of a
// Secret holds its data) and further owner references stay out of memory.
func slimMetadata(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return stripUnread(in)
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: slimObjectMeta(&m.ObjectMeta)}, nil
}

// deploymentStatus reduces a Deployment to its slimmed metadata and its
// status: Gatewall reads its data planes' progress, never a Deployment's
// spec (every tenant's is cached, pod template and all).
func deploymentStatus(in any) (any, error) {
	d, ok := in.(*appsv1.Deployment)
	if !ok {
		return stripUnread(in)
	}
	return &appsv1.Deployment{TypeMeta: d.TypeMeta, ObjectMeta: slimObjectMeta(&d.ObjectMeta), Status: d.Status}, nil
}

// daemonSetStatus reduces a DaemonSet as deploymentStatus does a Deployment.
func daemonSetStatus(in any) (any, error) {
	d, ok := in.(*appsv1.DaemonSet)
	if !ok {
		return stripUnread(in)
	}
	return &appsv1.DaemonSet{TypeMeta: d.TypeMeta, ObjectMeta: slimObjectMeta(&d.ObjectMeta), Status: d.Status}, nil
}

// slimObjectMeta is the metadata Gatewall reads of a data-plane kind.
func slimObjectMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, Generation: m.Generation,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: keep(m.Labels, keptLabels), Annotations: keep(m.Annotations, keptAnnotations),
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		out.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return out
}

// keep returns the entries of m under keys (nil when none).
func keep(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// newCache makes the manager's cache, which refuses to hold whole objects
// of the metadata-only kinds: a typed watch or cached read of a Secret
// would otherwise start an informer holding every Secret of the cluster,
// silently.
func newCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return metadataOnlyCache{Cache: c, scheme: opts.Scheme}, nil
}

// metadataOnlyCache is a cache that holds the metadata-only kinds as
// metadata (metav1.PartialObjectMetadata) only.
type metadataOnlyCache struct {
	cache.Cache
	scheme *runtime.Scheme
}

// refuse says why obj (an object or a list) may not be cached, or nil.
func (c metadataOnlyCache) refuse(obj runtime.Object) error {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return nil
	}
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil // the cache reports it
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return refuseKind(gvk)
}

func refuseKind(gvk schema.GroupVersionKind) error {
	if !metadataOnly[gvk] {
		return nil
	}
	return fmt.Errorf("the manager caches only the metadata of %ss (every tenant's, however many and large): "+
		"watch them with builder.OnlyMetadata, read their metadata as metav1.PartialObjectMetadata, "+
		"and the content of a referenced one with snapshot.Referenced", gvk.Kind)
}

func (c metadataOnlyCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.refuse(obj); err != nil {
		return err
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c metadataOnlyCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.refuse(list); err != nil {
		return err
	}
	return c.Cache.List(ctx, list, opts...)
}

func (c metadataOnlyCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if err := c.refuse(obj); err != nil {
		return nil, err
	}
	return c.Cache.GetInformer(ctx, obj, opts...)
}

// GetInformerForKind always makes an informer of whole objects.
func (c metadataOnlyCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if err := refuseKind(gvk); err != nil {
		return nil, err
	}
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

func (c metadataOnlyCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if err := c.refuse(obj); err != nil {
		return err
	}
	return c.Cache.IndexField(ctx, obj, field, extract)
}

// The transform's signature is client-go's.
var _ toolscache.TransformFunc = slimMetadata
