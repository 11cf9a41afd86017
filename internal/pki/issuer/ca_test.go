package issuer

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
)

func TestIssuedCertificatesVerifyAgainstTheCA(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.IssueServing("node", []net.IP{net.ParseIP("10.244.0.1")}, []string{"node.local"})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.IssueClient("apiserver", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	sc := parse(t, serving)
	if _, err := sc.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "10.244.0.1"}); err != nil {
		t.Errorf("serving certificate does not verify for its IP: %v", err)
	}
	if _, err := sc.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "10.244.0.2"}); err == nil {
		t.Error("serving certificate verifies for an IP it was not issued for")
	}
	cc := parse(t, client)
	if _, err := cc.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if cc.Subject.CommonName != "apiserver" || len(cc.Subject.Organization) != 1 || cc.Subject.Organization[0] != "system:masters" {
		t.Errorf("client subject = %v", cc.Subject)
	}
	other, err := NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Verify(x509.VerifyOptions{Roots: other.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("client certificate verifies against an unrelated CA")
	}
}

func parse(t *testing.T, kp KeyPair) *x509.Certificate {
	t.Helper()
	if _, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
		t.Fatalf("key pair does not match: %v", err)
	}
	block, _ := pem.Decode(kp.CertPEM)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
