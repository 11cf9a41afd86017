package pki_test

import (
	"bytes"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/test/certgen"
)

func TestParseCABundle(t *testing.T) {
	root := issue(t, "root", certgen.RSA2048, nil, certgen.SHA256, true)
	other := issue(t, "other root", certgen.P384, nil, certgen.SHA384, true)
	weak := issue(t, "weak root", certgen.RSA1024, nil, certgen.SHA1, true)
	interSHA1 := issue(t, "intermediate SHA-1", certgen.RSA2048, root, certgen.SHA1, true)
	withHeader := func(block []byte, h string) []byte {
		first, rest, _ := strings.Cut(string(block), "\n")
		return []byte(first + "\n" + h + "\n\n" + rest)
	}
	trusted := pem.EncodeToMemory(&pem.Block{Type: "TRUSTED CERTIFICATE", Bytes: append(other.DER, 0x30, 0x00)})

	accepted := []struct {
		name string
		in   []byte
		want []string
	}{
		{"one root", root.PEM(), []string{"root"}},
		{"several, in the order given", join(other.PEM(), root.PEM()), []string{"other root", "root"}},
		{"weak CAs load (OpenSSL checks them when it verifies a peer)", join(weak.PEM(), interSHA1.PEM()), []string{"weak root", "intermediate SHA-1"}},
		{"headers are dropped", join(withHeader(root.PEM(), "Comment: x"), withHeader(other.PEM(), "Proc-Type: 4,blah")), []string{"root", "other root"}},
		{"text before and between blocks is dropped", join([]byte("# Root\n"), root.PEM(), []byte("# Other\n"), other.PEM(), []byte("\n\n")), []string{"root", "other root"}},
		{"duplicates are written once", join(root.PEM(), other.PEM(), root.PEM()), []string{"root", "other root"}},
		{"CRLF line ends", bytes.ReplaceAll(root.PEM(), []byte("\n"), []byte("\r\n")), []string{"root"}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			out, err := pki.ParseCABundle(tc.in)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			names, others := subjects(t, out)
			if strings.Join(names, ", ") != strings.Join(tc.want, ", ") || len(others) > 0 {
				t.Errorf("written: certificates %q and blocks %q, want certificates %q", names, others, tc.want)
			}
		})
	}

	refused := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "holds no PEM certificate"},
		{"not PEM", []byte("hello"), "holds data that is not PEM"},
		{"text after the last block", join(root.PEM(), []byte("trailing words\n")), "holds data that is not PEM"},
		{"a block cut short", join(root.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB\n")), "PEM block 2 does not decode"},
		{"a block whose base64 is broken", join([]byte("-----BEGIN CERTIFICATE-----\nMI#IB\n-----END CERTIFICATE-----\n"), root.PEM()), "PEM block 1 does not decode"},
		{"a junk certificate", join(root.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END CERTIFICATE-----\n")),
			"PEM block 2 is a certificate that does not parse"},
		{"a TRUSTED CERTIFICATE block", join(root.PEM(), trusted), "PEM block 2 is a TRUSTED CERTIFICATE (OpenSSL's certificate with trust settings), which NGINX does not read here"},
		{"a private key", join(root.PEM(), certgen.KeyPEM(root.Key, certgen.PKCS8)), "holds a PEM PRIVATE KEY block; only CERTIFICATE blocks are allowed"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			out, err := pki.ParseCABundle(tc.in)
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}
