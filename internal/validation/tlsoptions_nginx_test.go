package validation_test

import (
	"crypto/x509"
	"encoding/pem"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/certgen"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// Values of each key, valid and not, at the edges of what NGINX and
// OpenSSL accept.
var tlsOptionValues = map[string][]string{
	validation.TLSOptionProtocols: {"TLSv1.2 TLSv1.3", "TLSv1.3", "TLSv1.2", "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3", "SSLv3", "SSLv2 TLSv1.2",
		"TLSv1.4", "tlsv1.2", "TLSv1.2  TLSv1.3", "TLSv1.3 TLSv1.3"},
	validation.TLSOptionCiphers: {"ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:HIGH:!aNULL:!MD5", "HIGH:!aNULL:!MD5",
		"DEFAULT:@SECLEVEL=0", "HIGH:@SECLEVEL=3", "HIGH:@SECLEVEL=9", "unknown!", "ECDHE-RSA-AES128-GCM-SHA265", "HIGH:!aNUL", "LOW",
		"eNULL:!eNULL", "HIGH MEDIUM", "HIGH:DEFAULT", "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256:HIGH", "kEECDH+AESGCM:@STRENGTH",
		"AES128-SHA", "HIGH::!MD5", "SUITEB128", "ALL:-RSA:+SHA1"},
	validation.TLSOptionPreferServerCiphers: {"on", "off", "ON", "yes"},
	validation.TLSOptionSessionCache:        {"off", "none", "10m", "32k", "16k", "32m", "33m", "1g", "shared:SSL:10m", "abc"},
	validation.TLSOptionSessionTimeout:      {"300", "5m", "1d", "7d", "500ms", "8d", "0", "10M", "1h30m", "x"},
	validation.TLSOptionECDHCurve: {"auto", "P-256", "X25519:P-384", "x25519:X448", "secp160r1", "P-256:prime256v1", "bogus",
		"brainpoolP256r1", "ffdhe2048", "secp384r1;", "auto:P-256", "P-521:ffdhe3072"},
}

// stricterThanNginx are Gatewall's refusals of values NGINX loads, each
// deliberate: the value would be silently ignored, never negotiated, or
// exceed a budget.
var stricterThanNginx = regexp.MustCompile(strings.Join([]string{
	`Debian builds it without SSL 2 and 3`, // NGINX takes the word, OpenSSL 3.0 has no such protocol
	`add :@SECLEVEL=0`,                     // TLS 1.0 and 1.1 handshakes fail at level 2
	`is not a protocol`,                    // NGINX reads tlsv1.2 case-insensitively; Gatewall wants NGF's spelling
	`is not a cipher or keyword`,           // OpenSSL drops it silently
	`DEFAULT is read only as the first`,    // OpenSSL drops it silently there
	`is a TLS 1.3 cipher suite`,            // OpenSSL drops it silently
	`Suite B`,                              // changes more than ciphers
	`the level may be 0 to 2`,              // a level over the data plane's refuses certificates or handshakes
	`empty element`,                        // OpenSSL skips it
	`must be "on" or "off"`,                // NGINX reads ON too
	`to 32m`,                               // the Gateway's budget of session caches
	`from 1s to 7d`,                        // 0 keeps no session; over 7d TLS 1.3 ignores
	`one unit`,                             // NGINX reads 1h30m and 10M (months) too
	`security level 2`,                     // OpenSSL loads the curve and never negotiates it
	`no group of the list is negotiated`,   // the listener could complete no handshake of a protocol it allows
}, "|"))

// rawTLSDirectives writes options into NGINX's directives as NGINX Gateway
// Fabric does, without Gatewall's checks (each value as one token).
func rawTLSDirectives(opts map[string]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		switch k {
		case validation.TLSOptionProtocols:
			b.WriteString("ssl_protocols " + v + ";\n") // words
		case validation.TLSOptionCiphers:
			b.WriteString("ssl_ciphers " + syntax.Quote(v) + ";\n")
		case validation.TLSOptionPreferServerCiphers:
			b.WriteString("ssl_prefer_server_ciphers " + syntax.Quote(v) + ";\n")
		case validation.TLSOptionSessionCache:
			if v != "off" && v != "none" {
				v = "shared:sess:" + v
			}
			b.WriteString("ssl_session_cache " + syntax.Quote(v) + ";\n")
		case validation.TLSOptionSessionTimeout:
			b.WriteString("ssl_session_timeout " + syntax.Quote(v) + ";\n")
		case validation.TLSOptionECDHCurve:
			b.WriteString("ssl_ecdh_curve " + syntax.Quote(v) + ";\n")
		}
	}
	return b.String()
}

// TestTLSOptionsVerdictMatchesNginx: for random tls.options, what Gatewall
// accepts passes real `nginx -t` in an HTTPS server, what NGINX rejects
// Gatewall refuses, and what Gatewall refuses that NGINX loads is refused
// for one of the deliberate reasons (stricterThanNginx).
func TestTLSOptionsVerdictMatchesNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	cert, err := certgen.Issue(certgen.Spec{Name: "tls-options", Key: certgen.Key(certgen.RSA2048, 0), Digest: certgen.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.Key)
	if err != nil {
		t.Fatal(err)
	}
	pair := append(cert.PEM(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})...)
	certFile := config.File{Path: config.SecretsDir + "pair.pem", Data: pair, Mode: 0o600}

	r := rand.New(rand.NewSource(11))
	keys := append([]string(nil), validation.TLSOptionKeys...)
	const draws = 160
	var configs [][]config.File
	var drawn []map[string]string
	for i := 0; i < draws; i++ {
		opts := map[string]string{}
		for _, k := range keys {
			if r.Intn(3) == 0 {
				vs := tlsOptionValues[k]
				opts[k] = vs[r.Intn(len(vs))]
			}
		}
		drawn = append(drawn, opts)
		configs = append(configs, []config.File{certFile, nginxtest.ServerConf(
			"listen 127.0.0.1:8443 ssl;\nssl_certificate " + certFile.Path + ";\nssl_certificate_key " + certFile.Path + ";\n" + rawTLSDirectives(opts))})
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	both, stricter, accepted := 0, 0, 0
	for i, res := range results {
		_, _, errs := validation.ParseTLSOptions(drawn[i])
		switch {
		case len(errs) == 0 && !res.OK:
			t.Errorf("%v: Gatewall accepts, nginx -t says %s", drawn[i], res.Output)
		case len(errs) == 0:
			accepted++
		case !res.OK:
			both++
		default:
			for _, e := range errs {
				if !stricterThanNginx.MatchString(e.Error()) {
					t.Errorf("%v: Gatewall refuses %v, which NGINX loads, for no deliberate reason", drawn[i], e)
				}
			}
			stricter++
		}
	}
	if both == 0 || stricter == 0 || accepted < 20 {
		t.Fatalf("draws: %d accepted, %d refused by both, %d refused by Gatewall only: a side is missing", accepted, both, stricter)
	}
	t.Logf("%d random tls.options: %d accepted by both, %d refused by both, %d refused by Gatewall only (deliberately)", draws, accepted, both, stricter)
}
