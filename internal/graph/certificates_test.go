package graph

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/test/certgen"
)

// certMaterial is certificate material for the tests: a good pair and CA
// bundle, and ones Go's own checks accept but NGINX's OpenSSL refuses.
type certMaterial struct {
	goodCert, goodKey, sha1Cert, sha1Key []byte
	goodCA, headerCA, brokenCA           []byte
}

func newCertMaterial(t *testing.T) certMaterial {
	t.Helper()
	issue := func(name string, issuer *certgen.Cert, d certgen.Digest) *certgen.Cert {
		c, err := certgen.Issue(certgen.Spec{Name: name, Key: certgen.Key(certgen.P256, len(name)), Issuer: issuer, Digest: d, CA: issuer == nil})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	root := issue("root", nil, certgen.SHA256)
	good, sha1 := issue("good", root, certgen.SHA256), issue("sha1", root, certgen.SHA1)
	rootPEM := string(root.PEM())
	first, rest, _ := strings.Cut(rootPEM, "\n")
	return certMaterial{
		goodCert: good.PEM(), goodKey: certgen.KeyPEM(good.Key, certgen.PKCS8),
		sha1Cert: sha1.PEM(), sha1Key: certgen.KeyPEM(sha1.Key, certgen.SEC1),
		goodCA: root.PEM(),
		// OpenSSL refuses a header that is not Proc-Type ("not proc type").
		headerCA: []byte(first + "\nComment: our root\n\n" + rest),
		// Go's PEM decoder skips a block it cannot decode; OpenSSL fails.
		brokenCA: []byte(rootPEM + "-----BEGIN CERTIFICATE-----\nMII#B\n-----END CERTIFICATE-----\n" + rootPEM),
	}
}

func tlsSecret(name string, cert, key []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}}
}

func caConfigMap(name string, ca []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{caCertKey: string(ca)}}
}

// TestCertificateMaterialRefusedOnItsObject: certificate material NGINX's
// OpenSSL would refuse is refused on the object that brought it (the
// listener, the ListenerSet's listener, the Gateway's client certificate
// validation on its listeners, the BackendTLSPolicy and the backends it
// applies to, the Gateway's backend client certificate), with the Gateway
// API's reason and a message naming the object and the problem; the
// Gateway and its other listeners keep working, and what is accepted
// reaches NGINX re-encoded.
func TestCertificateMaterialRefusedOnItsObject(t *testing.T) {
	m := newCertMaterial(t)
	https := func(name string, port gatewayv1.PortNumber, secret string) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(secret)}}}}
	}
	input := func() *Input {
		in := listenerSetInput("set", 8443)
		in.Add(tlsSecret("good", m.goodCert, m.goodKey))
		in.Add(tlsSecret("sha1", m.sha1Cert, m.sha1Key))
		in.Add(caConfigMap("good-ca", m.goodCA))
		in.Add(caConfigMap("header-ca", m.headerCA))
		in.Add(caConfigMap("broken-ca", m.brokenCA))
		ls := in.ListenerSets[key("ns", "set")]
		ls.Spec.Listeners[0].Protocol = gatewayv1.HTTPSProtocolType
		ls.Spec.Listeners[0].TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "good"}}}
		gw := in.Gateways[key("ns", "gw")]
		gw.Spec.Listeners = append(gw.Spec.Listeners, https("https", 443, "good"), https("other", 9443, "good"))
		return in
	}
	frontend := func(port gatewayv1.PortNumber, ca string) *gatewayv1.FrontendTLSConfig {
		return &gatewayv1.FrontendTLSConfig{PerPort: []gatewayv1.TLSPortConfig{{Port: port, TLS: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{
			CACertificateRefs: []gatewayv1.ObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(ca)}}}}}}}
	}
	resolved := func(cs []metav1.Condition) metav1.Condition {
		if c := conditions.Find(cs, string(gatewayv1.ListenerConditionResolvedRefs)); c != nil {
			return *c
		}
		return metav1.Condition{}
	}
	type listenerWant struct {
		id, reason, message string // reason "" for resolved
	}
	cases := []struct {
		name      string
		change    func(*Input)
		listeners []listenerWant
		check     func(*testing.T, *Gateway)
	}{
		{"a Gateway listener's certificate signed with SHA-1", func(in *Input) {
			in.Gateways[key("ns", "gw")].Spec.Listeners[1] = https("https", 443, "sha1")
		}, []listenerWant{{"https", "InvalidCertificateRef",
			`Secret ns/sha1 does not hold a TLS certificate and key NGINX can load: tls.crt: certificate 1 (subject "CN=sha1") is signed with ECDSA-SHA1; NGINX's OpenSSL (security level 2: 112 bits) refuses signatures under 112 bits (ca md too weak)`},
			{"other", "", ""}, {"ns/set/extra", "", ""}}, nil},
		{"a ListenerSet listener's certificate signed with SHA-1", func(in *Input) {
			ls := in.ListenerSets[key("ns", "set")]
			ls.Spec.Listeners[0].TLS.CertificateRefs[0].Name = "sha1"
			ls.Spec.Listeners = append(ls.Spec.Listeners, gatewayv1.ListenerEntry{Name: "plain", Port: 8080, Protocol: gatewayv1.HTTPProtocolType})
		}, []listenerWant{{"ns/set/extra", "InvalidCertificateRef", "Secret ns/sha1 does not hold a TLS certificate and key NGINX can load: tls.crt: certificate 1 (subject \"CN=sha1\") is signed with ECDSA-SHA1"},
			{"ns/set/plain", "", ""}, {"https", "", ""}, {"other", "", ""}}, func(t *testing.T, g *Gateway) {
			if !g.ListenerSets[0].Accepted {
				t.Errorf("the ListenerSet is refused as a whole: %+v", g.ListenerSets[0].Conditions)
			}
		}},
		{"a client validation CA with a block Go skips and OpenSSL fails on", func(in *Input) {
			in.Gateways[key("ns", "gw")].Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: frontend(443, "broken-ca")}
		}, []listenerWant{{"https", "InvalidCACertificateRef", "tls.frontend validation: ConfigMap ns/broken-ca key ca.crt: PEM block 2 does not decode"},
			{"other", "", ""}, {"ns/set/extra", "", ""}}, nil},
		{"a client validation CA with a header line is accepted, without it", func(in *Input) {
			in.Gateways[key("ns", "gw")].Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: frontend(443, "header-ca")}
		}, []listenerWant{{"https", "", ""}, {"other", "", ""}}, func(t *testing.T, g *Gateway) {
			cv := g.Listeners[1].ClientValidation
			if cv == nil || !bytes.Equal(cv.CAPEM, m.goodCA) {
				t.Errorf("the CA reaching NGINX is not the re-encoded certificate: %+v", cv)
			}
		}},
		{"a BackendTLSPolicy CA with a block Go skips", func(in *Input) {
			addBackendTLS(in, "broken-ca")
		}, []listenerWant{{"https", "", ""}}, func(t *testing.T, g *Gateway) {
			b := g.Routes[0].Rules[0].Backends[0]
			if b.Valid || !strings.Contains(b.Err, "BackendTLSPolicy ns/tls: caCertificateRef: ConfigMap ns/broken-ca key ca.crt: PEM block 2 does not decode") {
				t.Errorf("backend: valid=%v %q", b.Valid, b.Err)
			}
		}},
		{"a BackendTLSPolicy CA with a header line is accepted, without it", func(in *Input) {
			addBackendTLS(in, "header-ca")
		}, []listenerWant{{"https", "", ""}}, func(t *testing.T, g *Gateway) {
			b := g.Routes[0].Rules[0].Backends[0]
			if !b.Valid || b.TLS == nil || !bytes.Equal(b.TLS.CAPEM, m.goodCA) {
				t.Errorf("backend: valid=%v %q, TLS %+v", b.Valid, b.Err, b.TLS)
			}
		}},
		{"a backend client certificate signed with SHA-1", func(in *Input) {
			in.Gateways[key("ns", "gw")].Spec.TLS = &gatewayv1.GatewayTLSConfig{Backend: &gatewayv1.GatewayBackendTLS{
				ClientCertificateRef: &gatewayv1.SecretObjectReference{Name: "sha1"}}}
		}, []listenerWant{{"https", "", ""}, {"other", "", ""}}, func(t *testing.T, g *Gateway) {
			c := conditions.Find(g.Conditions, string(gatewayv1.GatewayConditionResolvedRefs))
			if g.BackendClientCert != nil || c == nil || c.Reason != string(gatewayv1.GatewayReasonInvalidClientCertificateRef) ||
				!strings.Contains(c.Message, "Secret ns/sha1 does not hold a TLS certificate and key NGINX can load") {
				t.Errorf("backend client certificate %v, condition %+v", g.BackendClientCert != nil, c)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input()
			tc.change(in)
			g := buildTest(t, in)
			if !g.Valid {
				t.Fatalf("the Gateway is refused: %+v", g.Conditions)
			}
			byID := map[string]*Listener{}
			all := g.Listeners
			for _, s := range g.ListenerSets {
				all = append(all, s.Listeners...)
			}
			for _, l := range all {
				byID[l.ID] = l
			}
			for _, want := range tc.listeners {
				l := byID[want.id]
				if l == nil {
					t.Fatalf("no listener %s", want.id)
				}
				c := resolved(l.Conditions)
				switch {
				case want.reason == "" && (!l.Valid || c.Status != metav1.ConditionTrue):
					t.Errorf("listener %s: valid=%v %s %s %q, want it resolved", l.ID, l.Valid, c.Status, c.Reason, c.Message)
				case want.reason != "" && (l.Valid || c.Status != metav1.ConditionFalse || c.Reason != want.reason || !strings.Contains(c.Message, want.message)):
					t.Errorf("listener %s: valid=%v %s %s %q\nwant False %s %q", l.ID, l.Valid, c.Status, c.Reason, c.Message, want.reason, want.message)
				}
				if l.Valid && l.TLS != nil && !bytes.Equal(l.TLS.PEM, append(append([]byte{}, m.goodCert...), pkcs8(t, m.goodKey)...)) {
					t.Errorf("listener %s: the file reaching NGINX is not the re-encoded pair:\n%s", l.ID, l.TLS.PEM)
				}
			}
			if tc.check != nil {
				tc.check(t, g)
			}
		})
	}
}

// pkcs8 is a PKCS #8 key block as it is: certgen writes canonical PEM.
func pkcs8(t *testing.T, key []byte) []byte {
	t.Helper()
	if !bytes.HasPrefix(key, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Fatalf("not a PKCS #8 key: %s", key)
	}
	return key
}

// addBackendTLS routes ns/gw's HTTP listener to Service ns/app over TLS,
// verified with the CA bundle of ConfigMap ns/ca (BackendTLSPolicy ns/tls).
func addBackendTLS(in *Input, ca string) {
	in.Add(testHTTPRoute("route", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}))
	in.Add(&gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tls"},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "app"}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "app.example.com",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(ca)}}}}})
	svc := in.Services[key("ns", "app")]
	svc.Spec.Ports[0].AppProtocol = ptr.To("https")
}
