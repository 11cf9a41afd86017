package auth

import (
	"crypto/elliptic"
	"net/http"
	"testing"

	"github.com/gatewall/gatewall/test/jwttest"
)

// BenchmarkJWT: a request through a real NGINX to a route without
// authentication, and with a token of each kind of key (RSA 2048, P-256,
// P-384, HMAC): what verifying a token adds to a request, the test's
// client and backend included.
func BenchmarkJWT(b *testing.B) {
	keys := jwtKeys{rsa: jwttest.RSA("rsa", 2048), p256: jwttest.EC("p256", elliptic.P256()), p384: jwttest.EC("p384", elliptic.P384()), hs: jwttest.HMAC("hs", 64)}
	files, ids := renderGateway(b, jwtRoutes(jwttest.JWKS(keys.set())))
	d := start(b, files, ids)
	app := d.server("127.0.0.2", func(w http.ResponseWriter, _ *http.Request) {})
	d.endpoints(map[string][]string{"app": {app.addr}})
	d.client.Transport.(*http.Transport).DisableKeepAlives = false
	for _, c := range []struct{ name, path, alg string }{
		{"no authentication", "/open/x", ""}, {"RS256", "/jwt/x", "RS256"}, {"PS256", "/jwt/x", "PS256"},
		{"ES256", "/jwt/x", "ES256"}, {"ES384", "/jwt/x", "ES384"}, {"HS256", "/jwt/x", "HS256"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := request("GET", c.path, "")
			if c.alg != "" {
				req.Header.Set("Authorization", "Bearer "+jwttest.Token{Alg: c.alg, Key: keys.forAlg(c.alg), Claims: valid(nil)}.Sign())
			}
			for b.Loop() {
				if resp, _ := d.do(req.Clone(req.Context())); resp.StatusCode != 200 {
					b.Fatalf("%d", resp.StatusCode)
				}
			}
			_ = app.requests()
		})
	}
}
