package graph

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/test/certgen"
)

func btlsPolicy(name string, age time.Duration, section string, v gatewayv1.BackendTLSPolicyValidation) *gatewayv1.BackendTLSPolicy {
	t := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "svc"}}
	if section != "" {
		t.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	return &gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))},
		Spec:       gatewayv1.BackendTLSPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{t}, Validation: v},
	}
}

func TestBackendTLSPolicyOutcomes(t *testing.T) {
	system := gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com", WellKnownCACertificates: ptr.To(gatewayv1.WellKnownCACertificatesSystem)}
	in := NewInput("ctl")
	older := btlsPolicy("older", time.Hour, "", system)
	newer := btlsPolicy("newer", time.Minute, "", system)
	port := btlsPolicy("port", 0, "https", system)
	port.Spec.TargetRefs[0].Group = "core" // the core group, as Gatewall's policies may spell it
	missing := btlsPolicy("missing", 0, "metrics", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "nope"}}})
	wrongKind := btlsPolicy("wrong-kind", 0, "admin", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "Service", Name: "ca"}}})
	// NGINX Gateway Fabric's secure-backend guide keeps the CA in a Secret.
	fromSecret := btlsPolicy("from-secret", 0, "grpc", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "Secret", Name: "ca"}}})
	missingSecret := btlsPolicy("missing-secret", 0, "tls", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "Secret", Name: "nope"}}})
	badSecret := btlsPolicy("bad-secret", 0, "h2", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "Secret", Name: "not-a-ca"}}})
	ca, err := certgen.Issue(certgen.Spec{Name: "backend-ca", Key: certgen.Key(certgen.P256, 1), CA: true, Digest: certgen.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ca"}, Data: map[string][]byte{"ca.crt": ca.PEM()}})
	in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "not-a-ca"}, Data: map[string][]byte{"ca.crt": []byte("junk")}})
	badName := btlsPolicy("bad-name", 0, "web", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "../ca\nx"}}})
	in.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "../ca\nx"}})
	for _, p := range []*gatewayv1.BackendTLSPolicy{older, newer, port, missing, wrongKind, badName, fromSecret, missingSecret, badSecret} {
		in.Add(p)
	}
	for _, tc := range []struct {
		p          *gatewayv1.BackendTLSPolicy
		accepted   string // reason
		resolved   string // reason, "" when absent
		messageHas string
	}{
		{older, "Accepted", "ResolvedRefs", ""},
		{newer, "Conflicted", "", "ns/older already applies"},
		{port, "Accepted", "ResolvedRefs", ""},
		{missing, "NoValidCACertificate", "InvalidCACertificateRef", "ConfigMap ns/nope not found"},
		{wrongKind, "NoValidCACertificate", "InvalidKind", "only core ConfigMaps and Secrets"},
		{fromSecret, "Accepted", "ResolvedRefs", ""},
		{missingSecret, "NoValidCACertificate", "InvalidCACertificateRef", "Secret ns/nope not found"},
		{badSecret, "NoValidCACertificate", "InvalidCACertificateRef", "Secret ns/not-a-ca key ca.crt"},
		{badName, "NoValidCACertificate", "InvalidCACertificateRef", `name "../ca\nx" is not a valid object name`},
	} {
		out := BackendTLSPolicyOutcome(in, tc.p)
		reasons := map[string]metav1.Condition{}
		for _, c := range out.Conditions {
			reasons[c.Type] = c
		}
		if got := reasons["Accepted"].Reason; got != tc.accepted {
			t.Errorf("%s: Accepted reason %q, want %q", tc.p.Name, got, tc.accepted)
		}
		if got := reasons["ResolvedRefs"].Reason; got != tc.resolved {
			t.Errorf("%s: ResolvedRefs reason %q, want %q", tc.p.Name, got, tc.resolved)
		}
		if !strings.Contains(reasons["Accepted"].Message, tc.messageHas) {
			t.Errorf("%s: Accepted message %q, want it to contain %q", tc.p.Name, reasons["Accepted"].Message, tc.messageHas)
		}
		if (out.TLS != nil) != (tc.accepted == "Accepted") {
			t.Errorf("%s: TLS settings %+v", tc.p.Name, out.TLS)
		}
	}
	// A port named by a policy gets that policy; other ports the oldest
	// whole-Service policy; an unusable policy makes its port unusable.
	for portName, want := range map[string]string{"https": "ns/port", "http": "ns/older", "": "ns/older", "metrics": "error"} {
		tls, err := backendTLS(in, key("ns", "svc"), &corev1.ServicePort{Name: portName})
		switch {
		case want == "error":
			if err == nil {
				t.Errorf("port %q: no error", portName)
			}
		case err != nil || tls == nil || tls.Policy.String() != want:
			t.Errorf("port %q: %+v, %v; want %s", portName, tls, err, want)
		}
	}
}
