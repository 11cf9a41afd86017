package pki_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/test/certgen"
)

// issue makes a certificate for a test; CA certificates are the ones with
// an Issuer of nil or that issue others.
func issue(t *testing.T, name string, kind certgen.KeyKind, issuer *certgen.Cert, d certgen.Digest, ca bool) *certgen.Cert {
	t.Helper()
	c, err := certgen.Issue(certgen.Spec{Name: name, Key: certgen.Key(kind, len(name)), Issuer: issuer, Digest: d, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// subjects returns the common names of the certificates of canonical PEM,
// and the types of its other blocks; it fails on anything but canonical
// PEM (headers, text).
func subjects(t *testing.T, data []byte) (names, others []string) {
	t.Helper()
	for rest := data; len(rest) > 0; {
		b, after := pem.Decode(rest)
		if b == nil {
			t.Fatalf("not PEM: %q", rest)
		}
		if len(b.Headers) > 0 {
			t.Errorf("block %s has headers %v", b.Type, b.Headers)
		}
		if !bytes.Equal(pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: b.Bytes}), rest[:len(rest)-len(after)]) {
			t.Errorf("block %s is not canonical PEM: %q", b.Type, rest[:len(rest)-len(after)])
		}
		rest = after
		if b.Type != "CERTIFICATE" {
			others = append(others, b.Type)
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, c.Subject.CommonName)
	}
	return names, others
}

func TestParseKeyPair(t *testing.T) {
	root := issue(t, "root", certgen.RSA2048, nil, certgen.SHA256, true)
	rootSHA1 := issue(t, "root signed with SHA-1", certgen.RSA2048, nil, certgen.SHA1, true)
	inter := issue(t, "intermediate", certgen.P256, root, certgen.SHA256, true)
	inter1024 := issue(t, "intermediate 1024", certgen.RSA1024, root, certgen.SHA256, true)
	interSHA1 := issue(t, "intermediate SHA-1", certgen.RSA2048, root, certgen.SHA1, true)
	interMD5 := issue(t, "intermediate MD5", certgen.RSA2048, root, certgen.MD5, true)
	leaf := issue(t, "leaf", certgen.RSA2048, inter, certgen.SHA256, false)
	key := certgen.KeyPEM(leaf.Key, certgen.PKCS8)
	other := issue(t, "other", certgen.P256, root, certgen.SHA256, false)
	expired, err := certgen.Issue(certgen.Spec{Name: "expired", Key: certgen.Key(certgen.P384, 0), Issuer: root, Digest: certgen.SHA256, Validity: certgen.Expired})
	if err != nil {
		t.Fatal(err)
	}
	withLeaf := func(l *certgen.Cert, chain ...*certgen.Cert) ([]byte, []byte) {
		out := l.PEM()
		for _, c := range chain {
			out = append(out, c.PEM()...)
		}
		return out, certgen.KeyPEM(l.Key, certgen.PKCS8)
	}
	issued := func(name string, kind certgen.KeyKind, issuer *certgen.Cert, d certgen.Digest) ([]byte, []byte) {
		return withLeaf(issue(t, name, kind, issuer, d, false))
	}
	header := func(block []byte, h string) []byte {
		first, rest, _ := strings.Cut(string(block), "\n")
		return []byte(first + "\n" + h + "\n\n" + rest)
	}
	pair := func(cert, key []byte) [2][]byte { return [2][]byte{cert, key} }

	accepted := []struct {
		name  string
		in    [2][]byte
		chain []string // the certificates written, in order
	}{
		{"a leaf and its intermediate", pair(join(leaf.PEM(), inter.PEM()), key), []string{"leaf", "intermediate"}},
		{"a leaf alone", pair(leaf.PEM(), key), []string{"leaf"}},
		{"the smallest RSA key OpenSSL takes at 112 bits (1963)", pair(issued("rsa 1963", certgen.RSA1963, root, certgen.SHA256)), []string{"rsa 1963"}},
		{"a P-224 key (112 bits)", pair(issued("p224", certgen.P224, root, certgen.SHA256)), []string{"p224"}},
		{"a P-521 key", pair(issued("p521", certgen.P521, root, certgen.SHA384)), []string{"p521"}},
		{"an Ed25519 key", pair(issued("ed25519", certgen.Ed25519, root, certgen.SHA256)), []string{"ed25519"}},
		{"signed with SHA-224 (112 bits)", pair(issued("sha224", certgen.RSA2048, root, certgen.SHA224)), []string{"sha224"}},
		{"signed with RSA-PSS", pair(issued("pss", certgen.P256, root, certgen.PSS)), []string{"pss"}},
		{"signed by an Ed25519 CA", pair(issued("by ed25519", certgen.P256, issue(t, "ed25519 ca", certgen.Ed25519, nil, certgen.SHA256, true), certgen.SHA256)), []string{"by ed25519"}},
		{"self-signed with SHA-1: OpenSSL does not check a self-signed signature", pair(issued("self sha1", certgen.RSA2048, nil, certgen.SHA1)), []string{"self sha1"}},
		{"self-signed with MD5", pair(issued("self md5", certgen.RSA2048, nil, certgen.MD5)), []string{"self md5"}},
		{"a chain ending with a root signed with SHA-1", pair(withLeaf(issue(t, "under sha1 root", certgen.RSA2048, rootSHA1, certgen.SHA256, false), rootSHA1)), []string{"under sha1 root", "root signed with SHA-1"}},
		{"expired: NGINX loads it", pair(withLeaf(expired)), []string{"expired"}},
		{"the chain in another order is kept as given", pair(join(leaf.PEM(), root.PEM(), inter.PEM()), key), []string{"leaf", "root", "intermediate"}},
		{"a certificate given twice is written once", pair(join(leaf.PEM(), inter.PEM(), leaf.PEM(), inter.PEM()), key), []string{"leaf", "intermediate"}},
		{"headers are dropped", pair(join(header(leaf.PEM(), "Comment: x"), header(inter.PEM(), "Proc-Type: 4,blah")), header(key, "Comment: y")), []string{"leaf", "intermediate"}},
		{"text around blocks is dropped", pair(join([]byte("Bag Attributes\n"), leaf.PEM(), []byte("subject=CN=x\n"), inter.PEM(), []byte("end\n")), join([]byte("key:\n"), key, []byte("end\n"))), []string{"leaf", "intermediate"}},
		{"CRLF line ends", pair(bytes.ReplaceAll(join(leaf.PEM(), inter.PEM()), []byte("\n"), []byte("\r\n")), bytes.ReplaceAll(key, []byte("\n"), []byte("\r\n"))), []string{"leaf", "intermediate"}},
		{"a private key in tls.crt is left out", pair(join(leaf.PEM(), certgen.KeyPEM(other.Key, certgen.PKCS8), inter.PEM()), key), []string{"leaf", "intermediate"}},
		{"a TRUSTED CERTIFICATE block in tls.crt is left out", pair(join(leaf.PEM(), pem.EncodeToMemory(&pem.Block{Type: "TRUSTED CERTIFICATE", Bytes: append(other.DER, 0x30, 0x00)})), key), []string{"leaf"}},
		{"a PKCS #1 key", pair(leaf.PEM(), certgen.KeyPEM(leaf.Key, certgen.PKCS1)), []string{"leaf"}},
		{"a SEC 1 key after its EC PARAMETERS", pair(other.PEM(), join([]byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"), certgen.KeyPEM(other.Key, certgen.SEC1))), []string{"other"}},
		{"tls.key's first key is used", pair(leaf.PEM(), join(key, certgen.KeyPEM(other.Key, certgen.PKCS8))), []string{"leaf"}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := pki.ParseKeyPair(tc.in[0], tc.in[1])
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			names, others := subjects(t, kp.PEM)
			if strings.Join(names, ", ") != strings.Join(tc.chain, ", ") {
				t.Errorf("chain written: %q, want %q", names, tc.chain)
			}
			if len(others) != 1 || others[0] != "PRIVATE KEY" {
				t.Errorf("blocks after the chain: %q, want one PRIVATE KEY", others)
			}
			if _, err := tls.X509KeyPair(kp.PEM, kp.PEM); err != nil {
				t.Errorf("the file is not a key pair: %v", err)
			}
		})
	}

	refused := []struct {
		name string
		in   [2][]byte
		want string
	}{
		{"an RSA key a bit under what OpenSSL takes (1962)", pair(issued("rsa 1962", certgen.RSA1962, root, certgen.SHA256)),
			`tls.crt: certificate 1 (subject "CN=rsa 1962") has a 1962-bit RSA key; NGINX's OpenSSL (security level 2: 112 bits) refuses RSA keys under 1963 bits (ee key too small)`},
		{"a 1024-bit RSA leaf", pair(issued("rsa 1024", certgen.RSA1024, root, certgen.SHA256)), "has a 1024-bit RSA key"},
		{"a 1024-bit intermediate", pair(join(leaf.PEM(), inter1024.PEM()), key),
			`tls.crt: certificate 2 (subject "CN=intermediate 1024") has a 1024-bit RSA key; NGINX's OpenSSL (security level 2: 112 bits) refuses RSA keys under 1963 bits (ca key too small)`},
		{"a leaf signed with SHA-1", pair(issued("sha1", certgen.RSA2048, root, certgen.SHA1)),
			`tls.crt: certificate 1 (subject "CN=sha1") is signed with SHA1-RSA; NGINX's OpenSSL (security level 2: 112 bits) refuses signatures under 112 bits (ca md too weak)`},
		{"a leaf signed with ECDSA and SHA-1", pair(issued("ecdsa sha1", certgen.RSA2048, inter, certgen.SHA1)), "is signed with ECDSA-SHA1"},
		{"a leaf signed with MD5", pair(issued("md5", certgen.RSA2048, root, certgen.MD5)), "is signed with MD5-RSA"},
		{"an intermediate signed with SHA-1", pair(join(leaf.PEM(), interSHA1.PEM()), key), `certificate 2 (subject "CN=intermediate SHA-1") is signed with SHA1-RSA`},
		{"an intermediate signed with MD5", pair(join(leaf.PEM(), interMD5.PEM()), key), `certificate 2 (subject "CN=intermediate MD5") is signed with MD5-RSA`},
		{"a junk certificate block", pair(join(leaf.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END CERTIFICATE-----\n")), key),
			"tls.crt: PEM block 2 is a certificate that does not parse"},
		{"a block whose base64 is broken", pair(join(leaf.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB#x#\n-----END CERTIFICATE-----\n"), inter.PEM()), key),
			"tls.crt: PEM block 2 does not decode"},
		{"a block cut short", pair(join(leaf.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB\n")), key), "tls.crt: PEM block 2 does not decode"},
		{"an encrypted key (Proc-Type)", pair(leaf.PEM(), header(key, "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF")),
			"tls.key: the private key is encrypted, and NGINX is given no passphrase: store it unencrypted"},
		{"an ENCRYPTED PRIVATE KEY", pair(leaf.PEM(), bytes.ReplaceAll(key, []byte(" PRIVATE KEY"), []byte(" ENCRYPTED PRIVATE KEY"))), "tls.key: the private key is encrypted"},
		{"a key that is not the leaf's", pair(leaf.PEM(), certgen.KeyPEM(certgen.Key(certgen.RSA2048, 99), certgen.PKCS8)),
			`tls.key is not the key of the first certificate of tls.crt (subject "CN=leaf")`},
		{"the leaf's key for a chain whose first certificate is another", pair(join(inter.PEM(), leaf.PEM()), key), "tls.key is not the key of the first certificate"},
		{"no certificate", pair(key, key), "tls.crt: holds no PEM CERTIFICATE block"},
		{"no key", pair(leaf.PEM(), leaf.PEM()), "tls.key: holds no PEM private key block"},
		{"a key that does not parse", pair(leaf.PEM(), []byte("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")), "tls.key: the private key does not parse"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := pki.ParseKeyPair(tc.in[0], tc.in[1])
			if err == nil {
				t.Fatalf("accepted: %s", kp.PEM)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}
