package manager

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/gatewall/gatewall/internal/provisioner"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the agent TLS Secret.
const (
	agentTLSCert = corev1.TLSCertKey
	agentTLSKey  = corev1.TLSPrivateKeyKey
	agentTLSCA   = "ca.crt"
)

// ensureAgentTLS returns the agent TLS Secret of the installation serving
// controller, creating it with a new CA and a serving certificate for names
// when it does not exist. Kept in a Secret, the certificates survive manager
// restarts, so data planes keep trusting Gatewall without restarting.
func ensureAgentTLS(ctx context.Context, c client.Client, key types.NamespacedName, names []string, controller string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, key, s)
	if err == nil {
		return s, claimAgentTLS(ctx, c, s, controller)
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading agent TLS Secret %s: %w", key, err)
	}
	caPEM, certPEM, keyPEM, err := newServingCertificate(names)
	if err != nil {
		return nil, err
	}
	s = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "gatewall"},
			Annotations: map[string]string{provisioner.ControllerAnnotation: controller}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{agentTLSCert: certPEM, agentTLSKey: keyPEM, agentTLSCA: caPEM},
	}
	if err := c.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) { // another replica created it first
			if err := c.Get(ctx, key, s); err != nil {
				return nil, err
			}
			return s, claimAgentTLS(ctx, c, s, controller)
		}
		return nil, fmt.Errorf("creating agent TLS Secret %s: %w", key, err)
	}
	return s, nil
}

// claimAgentTLS refuses the agent TLS Secret of another installation (its
// certificate names that installation's agent server, and its CA is what
// that installation's data planes trust), and records this installation in
// a Secret made before installations were recorded.
func claimAgentTLS(ctx context.Context, c client.Client, s *corev1.Secret, controller string) error {
	owner, ok := s.Annotations[provisioner.ControllerAnnotation]
	switch {
	case ok && owner == controller:
		return nil
	case ok:
		return fmt.Errorf("the agent TLS Secret %s/%s belongs to the Gatewall installation of controller %q: give this one (%q) its own with --agent-tls-secret",
			s.Namespace, s.Name, owner, controller)
	}
	patch := client.MergeFrom(s.DeepCopy())
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[provisioner.ControllerAnnotation] = controller
	if err := c.Patch(ctx, s, patch); err != nil {
		return fmt.Errorf("recording the installation in the agent TLS Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// newServingCertificate makes a CA (10 years) and a serving certificate it
// signs (10 years; rotate by replacing the Secret) for names (DNS names or IPs).
func newServingCertificate(names []string) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "gatewall-agent-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano() + 1), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
