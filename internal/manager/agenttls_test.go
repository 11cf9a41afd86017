package manager

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func agentTLSSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	ca, cert, key, err := newServingCertificate([]string{"gatewall-agent.test"})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent-tls"},
		Data: map[string][]byte{agentTLSCert: cert, agentTLSKey: key, agentTLSCA: ca}}
}

// mount writes s into dir as the kubelet updates a Secret volume: files
// written into a new directory, then the ..data symlink swapped to it.
func mount(t *testing.T, dir string, s *corev1.Secret, version string) {
	t.Helper()
	for k, v := range s.Data {
		if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, version, k), v, 0o400); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, k)); err != nil {
			if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// TestAgentTLSFromMountedSecret: the agent server's certificate and the
// agents' CA come from the Secret read at start until the kubelet mounts
// it, then from the mounted files, read again when they change; nothing is
// written.
func TestAgentTLSFromMountedSecret(t *testing.T) {
	dir := t.TempDir()
	atStart, first, rotated := agentTLSSecret(t), agentTLSSecret(t), agentTLSSecret(t)
	a, err := newAgentTLS(dir, atStart)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, want *corev1.Secret) {
		t.Helper()
		c, err := a.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil || c == nil || !bytes.Equal(c.Certificate[0], der(t, want.Data[agentTLSCert])) {
			t.Errorf("%s: served another certificate (%v)", what, err)
		}
		ca, err := a.CA()
		if err != nil || !bytes.Equal(ca, want.Data[agentTLSCA]) {
			t.Errorf("%s: handed out another CA (%v)", what, err)
		}
	}
	check("before the volume is written", atStart)
	mount(t, dir, first, "..v1")
	check("mounted", first)
	mount(t, dir, rotated, "..v2")
	check("rotated", rotated)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 { // ..v1 ..v2 ..data and the three links
		t.Errorf("the mounted directory changed: %d entries", len(entries))
	}
	if _, err := newAgentTLS("", &corev1.Secret{Data: map[string][]byte{agentTLSCert: first.Data[agentTLSCert]}}); err == nil {
		t.Error("a Secret without key and CA accepted")
	}
}

// der is the DER of the first PEM block of data.
func der(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}
