package local

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProjectedServiceAccountToken(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "token")
	sa := "/var/run/secrets/kubernetes.io/serviceaccount"
	pod := execPod(ns, "holder", "cat "+mountRoot+"/tokens/gw-token; echo; cat "+sa+"/namespace; echo; "+
		"test -s "+sa+"/token && test -s "+sa+"/ca.crt && echo default-token-present; exec sleep 1000")
	pod.Spec.Volumes = []corev1.Volume{{Name: "tokens", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: "gatewall-test", ExpirationSeconds: ptr(int64(600)), Path: "gw-token",
		}}},
	}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "tokens", MountPath: mountRoot + "/tokens"}}
	// The ServiceAccount admission plugin adds the default token volume once
	// the namespace's ServiceAccount exists.
	eventually(t, 20*time.Second, "default ServiceAccount", func() (bool, string) {
		_, err := env.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "missing"
	})
	created, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hasDefault := false
	for _, v := range created.Spec.Volumes {
		hasDefault = hasDefault || strings.HasPrefix(v.Name, "kube-api-access-")
	}
	if !hasDefault {
		t.Fatalf("ServiceAccount admission did not add the token volume: %+v", created.Spec.Volumes)
	}
	var lines []string
	eventually(t, 30*time.Second, "holder printed its tokens", func() (bool, string) {
		got, err := podLogs(t, ns, "holder", &corev1.PodLogOptions{})
		if err != nil {
			return false, err.Error()
		}
		lines = strings.Split(strings.TrimSpace(got), "\n")
		return len(lines) == 3, got
	})
	if lines[1] != ns || lines[2] != "default-token-present" {
		t.Fatalf("default token volume: %q", lines[1:])
	}
	token := lines[0]

	review := func(audience string) *authenticationv1.TokenReview {
		r, err := env.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{audience}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := review("gatewall-test")
	if !r.Status.Authenticated || r.Status.User.Username != "system:serviceaccount:"+ns+":default" {
		t.Fatalf("TokenReview: %+v", r.Status)
	}
	if got := r.Status.User.Extra["authentication.kubernetes.io/pod-name"]; len(got) != 1 || got[0] != "holder" {
		t.Errorf("token not bound to the pod: extra %v", r.Status.User.Extra)
	}
	if r := review("another-audience"); r.Status.Authenticated {
		t.Error("token accepted for another audience")
	}
}
