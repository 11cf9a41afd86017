package provisioner

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// PullSecretName is the name of a Gateway's copy of one of the
// installation's image pull Secrets (--nginx-docker-secret): a pod may only
// use Secrets of its own namespace.
func PullSecretName(gw *gatewayv1.Gateway, source string) string {
	n := Name(gw) + "-pull-" + source
	if len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return n[:244] + "-" + hex.EncodeToString(sum[:])[:8]
}

// pullSecretCopies are the Gateway's copies of the installation's image
// pull Secrets: their type and data, the Gateway's labels and owner.
func pullSecretCopies(p Params, meta func(string) metav1.ObjectMeta) []*corev1.Secret {
	out := make([]*corev1.Secret, 0, len(p.PullSecrets))
	for _, s := range p.PullSecrets {
		out = append(out, &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: meta(PullSecretName(p.Gateway, s.Name)),
			Type:       s.Type,
			Data:       s.DeepCopy().Data,
		})
	}
	return out
}

// imagePullSecrets is the pods' list: the copies of the installation's
// Secrets, then the NginxProxy's own, each once.
func imagePullSecrets(copies []*corev1.Secret, np *v1alpha2.NginxProxySpec) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, corev1.LocalObjectReference{Name: name})
		}
	}
	for _, c := range copies {
		add(c.Name)
	}
	if w := np.Workload(); w != nil && w.Pod != nil {
		for _, s := range w.Pod.ImagePullSecrets {
			add(s.Name)
		}
	}
	return out
}
