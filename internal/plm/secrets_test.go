package plm_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/internal/plm"
)

func secret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall-system", Name: name}, Data: data}
}

func TestCredentialsFromSecret(t *testing.T) {
	id, key, err := plm.CredentialsFromSecret(secret("creds", map[string][]byte{"seaweedfs_admin_secret": []byte("s3cr3t\n")}))
	if err != nil || id != "admin" || key != "s3cr3t" {
		t.Errorf("= %q, %q, %v; want admin, s3cr3t (trailing newline dropped)", id, key, err)
	}
	s := &corev1.Secret{StringData: map[string]string{"seaweedfs_admin_secret": "x"}}
	if _, key, err := plm.CredentialsFromSecret(s); err != nil || key != "x" {
		t.Errorf("StringData: %q, %v", key, err)
	}
	for _, tc := range []struct {
		s    *corev1.Secret
		want string
	}{
		{nil, "nil"},
		{secret("creds", nil), `gatewall-system/creds: key "seaweedfs_admin_secret" missing`},
		{secret("creds", map[string][]byte{"seaweedfs_admin_secret": []byte(" \n")}), "is empty"},
	} {
		if _, _, err := plm.CredentialsFromSecret(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CredentialsFromSecret(%v) = %v; want %q", tc.s, err, tc.want)
		}
	}
}

func TestTLSFromSecrets(t *testing.T) {
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.IssueClient("gatewall", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.IssueClient("other", nil)
	if err != nil {
		t.Fatal(err)
	}
	caSecret := secret("ca", map[string][]byte{"ca.crt": ca.CertPEM()})
	clientSecret := secret("client", map[string][]byte{"tls.crt": client.CertPEM, "tls.key": client.KeyPEM})

	got, err := plm.TLSFromSecrets(caSecret, clientSecret, false)
	if err != nil || string(got.CAPEM) != string(ca.CertPEM()) || string(got.ClientKeyPEM) != string(client.KeyPEM) || got.SkipVerify {
		t.Errorf("both Secrets: %+v, %v", got, err)
	}
	if got, err := plm.TLSFromSecrets(nil, nil, true); err != nil || !got.SkipVerify || got.CAPEM != nil {
		t.Errorf("no Secrets: %+v, %v", got, err)
	}

	for _, tc := range []struct {
		name       string
		ca, client *corev1.Secret
		want       string
	}{
		{"ca key missing", secret("ca", map[string][]byte{"ca.pem": ca.CertPEM()}), nil, `gatewall-system/ca: key "ca.crt" missing`},
		{"ca not PEM", secret("ca", map[string][]byte{"ca.crt": []byte("nope")}), nil, "ca.crt: no PEM-encoded certificate"},
		{"key missing", nil, secret("client", map[string][]byte{"tls.crt": client.CertPEM}), `key "tls.key" missing`},
		{"cert missing", nil, secret("client", map[string][]byte{"tls.key": client.KeyPEM}), `key "tls.crt" missing`},
		{"mismatched pair", nil, secret("client", map[string][]byte{"tls.crt": client.CertPEM, "tls.key": other.KeyPEM}), "tls.crt/tls.key"},
	} {
		if _, err := plm.TLSFromSecrets(tc.ca, tc.client, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
