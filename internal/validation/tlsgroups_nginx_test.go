package validation_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/certgen"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// pairFile is a certificate and its key in one file, as Gatewall writes
// a listener's.
func pairFile(t *testing.T, kind certgen.KeyKind) config.File {
	t.Helper()
	cert, err := certgen.Issue(certgen.Spec{Name: "tls-" + string(kind), Key: certgen.Key(kind, 0), Digest: certgen.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.Key)
	if err != nil {
		t.Fatal(err)
	}
	return config.File{Path: config.SecretsDir + string(kind) + ".pem", Mode: 0o600,
		Data: append(cert.PEM(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})...)}
}

// curveOf connects with openssl s_client offering only group, over TLS 1.3
// or 1.2, and returns the $ssl_curve NGINX answers, or "" when no
// handshake completed with the group. The client runs at security level 0
// so that it offers what the server must refuse.
func curveOf(t *testing.T, s *nginxtest.Server, port int, group, version string) string {
	t.Helper()
	cmd := s.Command("openssl", "s_client", "-connect", fmt.Sprintf("127.0.0.1:%d", port), version, "-groups", group,
		"-cipher", "DEFAULT:@SECLEVEL=0", "-ign_eof", "-quiet")
	cmd.Stdin = strings.NewReader("GET / HTTP/1.0\r\n\r\n")
	out, _ := cmd.Output()
	_, curve, ok := strings.Cut(string(out), "curve=")
	if !ok {
		return ""
	}
	return strings.TrimSpace(curve)
}

// TestNginxNegotiatesTLSGroups: each group ssl-ecdh-curve accepts is
// negotiated by NGINX in the protocols Gatewall says, under the name
// Gatewall uses for it ($ssl_curve); the weak groups it refuses load and
// are never negotiated; auto is OpenSSL's list Gatewall says it is.
func TestNginxNegotiatesTLSGroups(t *testing.T) {
	nginxtest.RequireRoot(t)
	pair := pairFile(t, certgen.RSA2048)
	names := validation.TLSGroupNames()
	weak := validation.WeakTLSGroupNames()
	var servers strings.Builder
	all := append(append([]string{"auto"}, names...), weak...)
	for i, name := range all {
		fmt.Fprintf(&servers, "server { listen 127.0.0.1:%d ssl; ssl_protocols TLSv1.2 TLSv1.3; ssl_certificate %s; ssl_certificate_key %s; ssl_ecdh_curve %s; return 200 \"curve=$ssl_curve\\n\"; }\n",
			9000+i, pair.Path, pair.Path, name)
	}
	s, err := nginxtest.Serve([]config.File{pair, nginxtest.HTTPConf(servers.String())}, 9000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for i, name := range all {
		port := 9000 + i
		switch {
		case name == "auto":
			for _, g := range validation.AutoTLSGroups {
				if got := curveOf(t, s, port, g, "-tls1_3"); got != g {
					t.Errorf("auto: a TLS 1.3 client offering only %s got curve %q", g, got)
				}
			}
		case i > len(names):
			if got := curveOf(t, s, port, name, "-tls1_2"); got != "" {
				t.Errorf("weak group %s was negotiated: %q", name, got)
			}
		default:
			tls13, tls12, canonical := validation.TLSGroupProtocols(name)
			for _, v := range []struct {
				flag string
				want bool
			}{{"-tls1_3", tls13}, {"-tls1_2", tls12}} {
				got := curveOf(t, s, port, name, v.flag)
				if v.want && got != canonical || !v.want && got == canonical {
					t.Errorf("%s over %s: $ssl_curve %q; Gatewall says it is negotiated: %v, as %s", name, v.flag, got, v.want, canonical)
				}
			}
		}
	}
}
