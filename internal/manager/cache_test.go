package manager_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestCacheHoldsMetadataOnly runs the manager on a real API server. Its
// cache, and its client's cached reads, refuse whole Secrets, ConfigMaps
// and ServiceAccounts, typed or unstructured, to reads, lists, informers
// and indexes; their metadata is cached, reduced to what Gatewall reads;
// Deployments are cached as that metadata and their status, other kinds
// whole but for kubectl's last-applied copy.
func TestCacheHoldsMetadataOnly(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	mgr, err := manager.New(env.Config, manager.Options{
		ControllerName: manager.DefaultControllerName, GatewayClassName: manager.DefaultGatewayClassName,
		Namespace: manager.DefaultNamespace, MetricsAddr: "0", ProbeAddr: "0", DataPlane: dataplane.NewHeldFiles(),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunManager(t, mgr)
	c := mgr.GetCache()

	gatewayRef := metav1.OwnerReference{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Name: "gw", UID: "u1", Controller: ptr.To(true)}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tenant",
			Labels: map[string]string{provisioner.GatewayNameLabel: "gw", provisioner.ManagedByLabel: "gatewall", "team": "a"},
			Annotations: map[string]string{provisioner.ControllerAnnotation: "example.com/gatewall",
				"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 100<<10)},
			OwnerReferences: []metav1.OwnerReference{gatewayRef,
				{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "u2"}}},
		Data: map[string][]byte{"key": []byte(strings.Repeat("y", 100<<10))},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(secret)

	for _, c := range []struct {
		name string
		try  func() error
	}{
		{"typed read", func() error { return c.Get(ctx, key, &corev1.Secret{}) }},
		{"typed read through the manager's client", func() error { return mgr.GetClient().Get(ctx, key, &corev1.Secret{}) }},
		{"typed list", func() error { return c.List(ctx, &corev1.ConfigMapList{}) }},
		{"unstructured read", func() error {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("Secret")
			return c.Get(ctx, key, u)
		}},
		{"typed informer", func() error { _, err := c.GetInformer(ctx, &corev1.ServiceAccount{}); return err }},
		{"informer by kind", func() error {
			_, err := c.GetInformerForKind(ctx, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			return err
		}},
		{"typed index", func() error {
			return c.IndexField(ctx, &corev1.Secret{}, "x", func(client.Object) []string { return nil })
		}},
	} {
		err := c.try()
		if err == nil || !strings.Contains(err.Error(), "caches only the metadata of") {
			t.Errorf("%s: got %v, want a refusal", c.name, err)
		}
	}

	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Get(ctx, key, m); err != nil {
		t.Fatalf("reading the Secret's metadata: %v", err)
	}
	want := map[string]string{provisioner.GatewayNameLabel: "gw", provisioner.ManagedByLabel: "gatewall"}
	if !maps.Equal(m.Labels, want) || !maps.Equal(m.Annotations, map[string]string{provisioner.ControllerAnnotation: "example.com/gatewall"}) {
		t.Errorf("cached metadata: labels %v, annotations of %d bytes %v; want Gatewall's only", m.Labels, annotationBytes(m), slices.Sorted(maps.Keys(m.Annotations)))
	}
	if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != gatewayRef.UID || m.UID == "" || m.ResourceVersion == "" || m.Name != key.Name {
		t.Errorf("cached metadata lost what Gatewall reads: %+v", m.ObjectMeta)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{provisioner.GatewayNameLabel: "gw"}); err != nil || len(list.Items) != 1 {
		t.Errorf("listing Secrets' metadata by Gatewall's label: %d items, %v", len(list.Items), err)
	}

	// A Deployment is cached as its metadata and status; other kinds whole,
	// but for kubectl's last-applied copy.
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tenant", Labels: map[string]string{"app": "tenant"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 100<<10)}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "tenant"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "tenant"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("z", 100<<10)}}}}}}},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tenant", Annotations: map[string]string{"team": "a",
			"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 100<<10)}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	for _, o := range []client.Object{dep, svc} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	dep.Status.ObservedGeneration = 7
	if err := env.Client.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != 7 {
			return fmt.Errorf("cached Deployment status %+v, want the Deployment's", got.Status)
		}
		if len(got.Spec.Template.Spec.Containers) != 0 || len(got.Labels) != 0 || len(got.Annotations) != 0 {
			return fmt.Errorf("cached Deployment keeps its spec (%d containers), labels %v or annotations of %d bytes",
				len(got.Spec.Template.Spec.Containers), got.Labels, annotationBytes(got))
		}
		return nil
	})
	gotSvc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), gotSvc); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(gotSvc.Annotations, map[string]string{"team": "a"}) || len(gotSvc.Spec.Ports) != 1 {
		t.Errorf("cached Service: annotations %v, ports %v; want its own without kubectl's last-applied copy", slices.Sorted(maps.Keys(gotSvc.Annotations)), gotSvc.Spec.Ports)
	}
}

func annotationBytes(o metav1.Object) int {
	n := 0
	for k, v := range o.GetAnnotations() {
		n += len(k) + len(v)
	}
	return n
}
