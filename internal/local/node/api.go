package node

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiClient reads what pods refer to straight from the API server.
type apiClient struct{ client kubernetes.Interface }

func (a apiClient) configMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

func (a apiClient) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return a.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// token uses the TokenRequest API with the pod as bound object, so the token
// is invalidated when the pod is deleted, as a kubelet's are.
func (a apiClient) token(ctx context.Context, pod *corev1.Pod, audience string, seconds int64) (string, time.Time, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID,
		},
	}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	resp, err := a.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token for service account %s/%s: %w", pod.Namespace, sa, err)
	}
	return resp.Status.Token, resp.Status.ExpirationTimestamp.Time, nil
}

// klogRef names a pod in logs.
func klogRef(pod *corev1.Pod) string {
	if pod == nil {
		return "<unknown>"
	}
	return pod.Namespace + "/" + pod.Name
}
