package provisioner

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestImagePullSecrets: the installation's pull Secrets are copied into the
// Gateway's namespace (type and data, owned by the Gateway, found by its
// label) and the pods list the copies, then the NginxProxy's own Secrets,
// each once.
func TestImagePullSecrets(t *testing.T) {
	np := &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled, Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Pod: &v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "team-mirror"}, {Name: "gw-nginx-pull-f5-registry"}}},
	}}}
	p := params(np)
	source := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall-system", Name: "f5-registry", Labels: map[string]string{"owner": "ops"}},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"private-registry.nginx.com":{}}}`)},
	}
	p.PullSecrets = []*corev1.Secret{source}
	var copies []*corev1.Secret
	for _, o := range Objects(p) {
		if s, ok := o.(*corev1.Secret); ok && s.Type == corev1.SecretTypeDockerConfigJson {
			copies = append(copies, s)
		}
	}
	if len(copies) != 1 {
		t.Fatalf("%d copies, want 1", len(copies))
	}
	c := copies[0]
	if c.Name != "gw-nginx-pull-f5-registry" || c.Namespace != "apps" || string(c.Data[corev1.DockerConfigJsonKey]) != string(source.Data[corev1.DockerConfigJsonKey]) {
		t.Errorf("copy %s/%s with %q", c.Namespace, c.Name, c.Data)
	}
	if c.Labels[GatewayNameLabel] != "gw" || c.Labels["owner"] != "" || len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != "uid-1" {
		t.Errorf("copy labels %v, owners %+v: want the Gateway's, not the source's", c.Labels, c.OwnerReferences)
	}
	source.Data[corev1.DockerConfigJsonKey][0] = 'X'
	if c.Data[corev1.DockerConfigJsonKey][0] == 'X' {
		t.Errorf("the copy shares the source's data")
	}
	var got []string
	for _, r := range find[*appsv1.Deployment](t, p).Spec.Template.Spec.ImagePullSecrets {
		got = append(got, r.Name)
	}
	if want := []string{"gw-nginx-pull-f5-registry", "team-mirror"}; !slices.Equal(got, want) {
		t.Errorf("pods' imagePullSecrets %v, want %v", got, want)
	}

	if got := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{})).Spec.Template.Spec.ImagePullSecrets; got != nil {
		t.Errorf("without any: imagePullSecrets %v", got)
	}
	long := PullSecretName(p.Gateway, strings.Repeat("s", 253))
	if len(long) > 253 || long == PullSecretName(p.Gateway, strings.Repeat("s", 252)+"t") {
		t.Errorf("long names: %d bytes, or two sources give one name", len(long))
	}
}

// TestWAFImage: a Gateway with WAF enabled runs --nginx-waf-image unless its
// NginxProxy names an image; one without WAF runs --nginx-image.
func TestWAFImage(t *testing.T) {
	images := Images{NGINX: "registry.example.com/dataplane:1", NGINXWAF: "registry.example.com/dataplane-waf:1"}
	cases := []struct {
		name string
		np   *v1alpha2.NginxProxySpec
		want string
	}{
		{"without WAF", &v1alpha2.NginxProxySpec{}, images.NGINX},
		{"with WAF", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}, images.NGINXWAF},
		{"with WAF and an image of its own", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled, Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Repository: ptrTo("mirror.example.com/waf"), Tag: ptrTo("2")}}}}}, "mirror.example.com/waf:2"},
	}
	for _, c := range cases {
		p := params(c.np)
		p.Images = images
		if got := find[*appsv1.Deployment](t, p).Spec.Template.Spec.Containers[0].Image; got != c.want {
			t.Errorf("%s: image %s, want %s", c.name, got, c.want)
		}
	}
	p := params(&v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled})
	p.Images = Images{NGINX: "registry.example.com/dataplane:1"}
	if got := find[*appsv1.Deployment](t, p).Spec.Template.Spec.Containers[0].Image; got != p.Images.NGINX {
		t.Errorf("without --nginx-waf-image, a WAF Gateway runs %s, want --nginx-image", got)
	}
}

func ptrTo[T any](v T) *T { return &v }
