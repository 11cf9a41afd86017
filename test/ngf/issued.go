package ngf

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// Issued is what NGF's guides have cert-manager issue for a scenario.
type Issued struct {
	// Secrets are the Secrets the scenario's objects name.
	Secrets []*corev1.Secret
	// CA signed every certificate.
	CA *issuer.CA
	// Backend is, for secure-backend, the certificate its backend serves
	// (ledger.example.com), which the BackendTLSPolicy's CA verifies.
	Backend issuer.KeyPair
}

// Issue issues a scenario's certificates by a new CA, in the namespaces ns
// gives (as Objects): https-termination's listener certificate, and
// secure-backend's CA (a Secret's ca.crt), the Gateway's client
// certificate and the backend's own. Other scenarios need none.
func Issue(name string, ns func(string) string) (Issued, error) {
	var out Issued
	switch name {
	case "https-termination", "secure-backend":
	default:
		return out, nil
	}
	ca, err := issuer.NewCA("gatewall-scenario-ca")
	if err != nil {
		return out, fmt.Errorf("scenario %s: %w", name, err)
	}
	out.CA = ca
	tlsSecret := func(namespace, secret string, kp issuer.KeyPair) *corev1.Secret {
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns(namespace), Name: secret}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM},
		}
	}
	switch name {
	case "https-termination":
		kp, err := ca.IssueServing("shop.example.com", nil, []string{"shop.example.com"})
		if err != nil {
			return out, fmt.Errorf("scenario %s: %w", name, err)
		}
		out.Secrets = append(out.Secrets, tlsSecret("certs", "shop-cert", kp))
	case "secure-backend":
		client, err := ca.IssueClient("gateway", nil)
		if err != nil {
			return out, fmt.Errorf("scenario %s: %w", name, err)
		}
		if out.Backend, err = ca.IssueServing("ledger.example.com", nil, []string{"ledger.example.com"}); err != nil {
			return out, fmt.Errorf("scenario %s: %w", name, err)
		}
		out.Secrets = append(out.Secrets, tlsSecret("default", "gateway-client-cert", client),
			&corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns("default"), Name: "ledger-ca"},
				Data:       map[string][]byte{"ca.crt": ca.CertPEM()},
			})
	}
	return out, nil
}
