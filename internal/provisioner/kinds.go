package provisioner

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind is a kind of data-plane object, and how Gatewall reads back the
// objects of the kind that exist: typed, for the kinds whose status it
// reads (a Deployment's progress, a Service's addresses), else their
// metadata only (owner, labels, resourceVersion: all Apply and Remove
// need). The manager's watches see every tenant's objects of these kinds,
// as many and as large as tenants make them: it caches only the metadata of
// ServiceAccounts, ConfigMaps, Secrets, HorizontalPodAutoscalers and
// PodDisruptionBudgets, and of a Deployment or DaemonSet only its
// metadata and status (nothing reads back a data plane's spec: Apply
// compares resourceVersions).
type Kind struct {
	// Name is the kind, as in an object's TypeMeta.
	Name string
	gvk  schema.GroupVersionKind
	// metadataOnly reads the objects back as metav1.PartialObjectMetadata.
	metadataOnly bool
	object       func() client.Object
	list         func() client.ObjectList
}

// Kinds are the kinds of a data plane's objects (Objects).
var Kinds = []Kind{
	{Name: "Deployment", gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"),
		object: func() client.Object { return &appsv1.Deployment{} }, list: func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{Name: "DaemonSet", gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"),
		object: func() client.Object { return &appsv1.DaemonSet{} }, list: func() client.ObjectList { return &appsv1.DaemonSetList{} }},
	{Name: "Service", gvk: corev1.SchemeGroupVersion.WithKind("Service"),
		object: func() client.Object { return &corev1.Service{} }, list: func() client.ObjectList { return &corev1.ServiceList{} }},
	{Name: "ServiceAccount", gvk: corev1.SchemeGroupVersion.WithKind("ServiceAccount"), metadataOnly: true},
	{Name: "ConfigMap", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), metadataOnly: true},
	{Name: "Secret", gvk: corev1.SchemeGroupVersion.WithKind("Secret"), metadataOnly: true},
	{Name: "HorizontalPodAutoscaler", gvk: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), metadataOnly: true},
	{Name: "PodDisruptionBudget", gvk: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), metadataOnly: true},
}

// Object is an empty object of the kind to read one back into (and to
// watch the kind with).
func (k Kind) Object() client.Object {
	if !k.metadataOnly {
		return k.object()
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(k.gvk)
	return m
}

// List is an empty list of the kind to read objects back into.
func (k Kind) List() client.ObjectList {
	if !k.metadataOnly {
		return k.list()
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	return l
}

// kindOf is the Kind of a data-plane object o (false for other objects).
func kindOf(o client.Object) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == kind(o) {
			return k, true
		}
	}
	return Kind{}, false
}
