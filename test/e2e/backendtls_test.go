package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// tlsEcho is an echo backend serving HTTPS on 8443 with the Secret's
// certificate, behind Service name port 443.
func tlsEcho(ns, name, secret string) []client.Object {
	c := corev1.Container{
		Name: "echo", Image: echoImage,
		Env: append(podIdentityEnv(),
			corev1.EnvVar{Name: "TLS_SERVER_CERT", Value: "/etc/tls/crt"},
			corev1.EnvVar{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/tls/key"}),
		Ports:        []corev1.ContainerPort{{ContainerPort: 8443}},
		VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/etc/tls"}},
	}
	vols := []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "crt"}, {Key: "tls.key", Path: "key"}},
	}}}}
	return app(ns, name, 1, c, vols, corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)})
}

// TestBackendTLS: with a BackendTLSPolicy, NGINX speaks TLS to the backend,
// sends the policy's hostname as SNI and verifies the backend's certificate;
// a policy whose CA did not sign it makes the route answer 502 (nothing is
// sent to an unverified backend), and fixing the policy restores traffic.
func TestBackendTLS(t *testing.T) {
	ns := namespace(t, "e2e-btls")
	gatewayClass(t)
	ca, err := issuer.NewCA("backend-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := issuer.NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.IssueServing("backend.example.com", nil, []string{"backend.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	create(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend-cert"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: cert.CertPEM, corev1.TLSPrivateKeyKey: cert.KeyPEM}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend-ca"}, Data: map[string]string{"ca.crt": string(ca.CertPEM())}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-ca"}, Data: map[string]string{"ca.crt": string(other.CertPEM())}},
	)
	create(t, tlsEcho(ns, "secure", "backend-cert")...)
	route := httpRoute(ns, "app", "gw", "app.example.com", "/", "secure")
	route.Spec.Rules[0].BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(443))
	policy := &gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secure"},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "secure"}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{
				Hostname:          "backend.example.com",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "backend-ca"}},
			},
		},
	}
	create(t,
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		route, policy,
	)
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	key := types.NamespacedName{Namespace: ns, Name: "secure"}

	// echo-basic reports the TLS connection NGINX made to it.
	serves(t, addr, "app.example.com", "/", 200, `"serverName": "backend.example.com"`, 60*time.Second)
	eventually(t, 30*time.Second, func() error { return policyConditions(key, "True", "True") })

	setCA := func(cm string) {
		t.Helper()
		p := &gatewayv1.BackendTLSPolicy{}
		if err := rt.Client.Get(context.Background(), key, p); err != nil {
			t.Fatal(err)
		}
		p.Spec.Validation.CACertificateRefs[0].Name = gatewayv1.ObjectName(cm)
		if err := rt.Client.Update(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	setCA("other-ca")
	serves(t, addr, "app.example.com", "/", 502, "", 30*time.Second)
	setCA("backend-ca")
	serves(t, addr, "app.example.com", "/", 200, `"serverName": "backend.example.com"`, 30*time.Second)
}

// policyConditions checks the BackendTLSPolicy's Accepted and ResolvedRefs
// statuses for its one ancestor, the Gateway gw.
func policyConditions(key types.NamespacedName, accepted, resolved string) error {
	p := &gatewayv1.BackendTLSPolicy{}
	if err := rt.Client.Get(context.Background(), key, p); err != nil {
		return err
	}
	if len(p.Status.Ancestors) != 1 || p.Status.Ancestors[0].AncestorRef.Name != "gw" {
		return fmt.Errorf("ancestors: %+v", p.Status.Ancestors)
	}
	conds := p.Status.Ancestors[0].Conditions
	for typ, want := range map[string]string{"Accepted": accepted, "ResolvedRefs": resolved} {
		c := meta.FindStatusCondition(conds, typ)
		if c == nil || string(c.Status) != want || c.ObservedGeneration != p.Generation {
			return fmt.Errorf("%s: %+v, want %s", typ, c, want)
		}
	}
	return nil
}
