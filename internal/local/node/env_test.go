package node

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeSources serves ConfigMaps and Secrets from maps.
type fakeSources struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (f fakeSources) configMap(_ context.Context, _, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f fakeSources) secret(_ context.Context, _, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func TestContainerEnvResolvesSourcesInKubernetesOrder(t *testing.T) {
	src := fakeSources{
		configMaps: map[string]*corev1.ConfigMap{"cfg": {Data: map[string]string{"B": "from-cm", "A": "a"}}},
		secrets:    map[string]*corev1.Secret{"sec": {Data: map[string][]byte{"pw": []byte("s3cret")}}},
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "x"}}}
	optional := true
	c := &corev1.Container{
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		EnvFrom:   []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		Env: []corev1.EnvVar{
			{Name: "CM_B", Value: "overridden"},
			{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "pw"}}},
			{Name: "GONE", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "k", Optional: &optional}}},
			{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "URL", Value: "http://$(IP):$(PORT)/$(APP)"},
		},
	}
	r := Runner{Env: []string{"PORT=3000", "CM_A=image"}}
	facts := podFacts{podIP: "10.244.0.7", allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}
	env, err := containerEnv(context.Background(), src, pod, c, r, facts)
	if err != nil {
		t.Fatal(err)
	}
	got := env.list()
	for _, want := range []string{"PORT=3000", "CM_A=a", "CM_B=overridden", "HOSTNAME=p", "IP=10.244.0.7", "APP=x",
		"PW=s3cret", "MEM_MI=64", "CPU=64", "URL=http://10.244.0.7:3000/x"} {
		if !slices.Contains(got, want) {
			t.Errorf("env lacks %s: %v", want, got)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "GONE=") {
			t.Errorf("missing optional secret key defined %s", kv)
		}
	}
	if !strings.HasPrefix(got[0], "PATH=") {
		t.Errorf("PATH is not first: %v", got)
	}

	c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "nope"}}}}
	if _, err := containerEnv(context.Background(), src, pod, c, r, facts); err == nil || !strings.Contains(err.Error(), "couldn't find key nope") {
		t.Errorf("missing required key: err = %v", err)
	}
}
