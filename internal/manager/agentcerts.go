package manager

import (
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// Keys of the agent TLS Secret.
const (
	agentTLSCert = corev1.TLSCertKey
	agentTLSKey  = corev1.TLSPrivateKeyKey
	agentTLSCA   = "ca.crt"
)

// ensureAgentTLS returns the agent TLS Secret of the installation serving
// controller, creating it with a new CA and a serving certificate for names,
// and sealKey (the pod seal key, sealkey.go) if given, when it does not
// exist. Kept in a Secret, the certificates survive manager restarts, so
// data planes keep trusting Gatewall without restarting.
func ensureAgentTLS(ctx context.Context, c client.Client, key types.NamespacedName, names []string, controller string, sealKey []byte) (*corev1.Secret, error) {
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
	if sealKey != nil {
		s.Data[agentTLSSealKey] = sealKey
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

// agentCertValidity is how long the agent server's generated CA and
// serving certificate are valid (rotate by replacing the Secret).
const agentCertValidity = 10 * 365 * 24 * time.Hour

// newServingCertificate makes a CA and a serving certificate it signs for
// names (DNS names or IPs), both valid for agentCertValidity.
func newServingCertificate(names []string) (caPEM, certPEM, keyPEM []byte, err error) {
	ca, err := issuer.NewCAValidFor("gatewall-agent-ca", agentCertValidity)
	if err != nil {
		return nil, nil, nil, err
	}
	var ips []net.IP
	var dns []string
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, n)
		}
	}
	kp, err := ca.IssueServing(names[0], ips, dns)
	if err != nil {
		return nil, nil, nil, err
	}
	return ca.CertPEM(), kp.CertPEM, kp.KeyPEM, nil
}
