package confcheck_test

import (
	"crypto/elliptic"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/confcheck"
	"github.com/gatewall/gatewall/test/jwttest"
)

const jwtID = "0123456789abcdef0123456789abcdef"

// goodJWT is good() with a location a JWT filter authenticates, forwarding
// a claim, and the policies file.
func goodJWT(t *testing.T, mutate func(*jwks.Policy)) map[string]string {
	t.Helper()
	set, _, err := jwks.Parse(jwttest.JWKS([]jwttest.Key{jwttest.EC("k", elliptic.P256())}))
	if err != nil {
		t.Fatal(err)
	}
	p := jwks.Policy{Realm: "api", Keys: &set, Headers: []jwks.Header{{Path: []string{"sub"}, Variable: "gw_jwt_0123456789ab"}},
		Authorization: &jwks.Requirement{Rules: []jwks.Rule{{Claims: []jwks.ClaimMatch{{Path: []string{"email"}, Regex: jwks.AnchoredRegex([]string{`.*@example\.com`})}}}}}}
	if mutate != nil {
		mutate(&p)
	}
	m := good()
	m[config.ServersConfPath] = strings.Replace(m[config.ServersConfPath], `    location = "/exact" {
        proxy_set_header X-A "a,b";`, `    location = "/exact" {
        set $gw_jwt_0123456789ab "";
        access_by_lua_block { require("gatewall.jwt").verify("`+jwtID+`") }
        proxy_set_header X-A "a,b";
        proxy_set_header X-Sub $gw_jwt_0123456789ab;`, 1)
	m[config.JWTPoliciesFile] = string(jwks.Policies{jwtID: p}.Encode())
	return m
}

// TestJWTDefectsAreFound: a JWT location calls Gatewall's Lua with a
// filter the policies hold, declares the variables the policy sets, and
// the policies hold nothing the graph refuses.
func TestJWTDefectsAreFound(t *testing.T) {
	if err := confcheck.Check(files(goodJWT(t, nil))); err != nil {
		t.Fatalf("the good JWT configuration: %v", err)
	}
	servers := config.ServersConfPath
	for _, c := range []struct {
		name      string
		mutate    func(*jwks.Policy)
		file, old string
		new, want string
	}{
		{name: "a filter without a policy", file: servers, old: `verify("` + jwtID + `")`, new: `verify("fedcba9876543210fedcba9876543210")`, want: "has no policy"},
		{name: "Lua that is not Gatewall's", file: servers, old: `verify("` + jwtID + `")`, new: `verify("` + jwtID + `") os.exit()`, want: "is not Gatewall's"},
		{name: "a claim's variable not emptied first", file: servers, old: `set $gw_jwt_0123456789ab "";`, new: ``, want: "unknown variable $gw_jwt_0123456789ab"},
		{name: "a claim's variable set to a value", file: servers, old: `set $gw_jwt_0123456789ab "";`, new: `set $gw_jwt_0123456789ab "admin";`, want: "set"},
		{name: "an RSA key verifying HMAC", mutate: func(p *jwks.Policy) { p.Keys.Keys[0].Algs = []string{"HS256"} }, want: "not an algorithm of its type"},
		{name: "a public key that does not parse", mutate: func(p *jwks.Policy) { p.Keys.Keys[0].DER = []byte("x") }, want: "does not parse"},
		{name: "keys and a key set", mutate: func(p *jwks.Policy) { p.KeySet = jwtID }, want: "keys or a key set"},
		{name: "a realm with a line break", mutate: func(p *jwks.Policy) { p.Realm = "a\nb" }, want: "control character"},
		{name: "a regex not anchored", mutate: func(p *jwks.Policy) { p.Authorization.Rules[0].Claims[0].Regex = ".*" }, want: "not an anchored expression"},
		{name: "a regex that backtracks", mutate: func(p *jwks.Policy) { p.Authorization.Rules[0].Claims[0].Regex = jwks.AnchoredRegex([]string{"(a+)+"}) }, want: "not an anchored expression"},
		{name: "a variable not a claim's", mutate: func(p *jwks.Policy) { p.Headers[0].Variable = "gw_host" }, want: "is not a claim's"},
		{name: "policies not written by Gatewall", file: config.JWTPoliciesFile, old: `{"filters":`, new: `{"extra":1,"filters":`, want: "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := goodJWT(t, c.mutate)
			if c.file != "" {
				if !strings.Contains(m[c.file], c.old) {
					t.Fatalf("%s has no %q", c.file, c.old)
				}
				m[c.file] = strings.Replace(m[c.file], c.old, c.new, 1)
			}
			if err := confcheck.Check(files(m)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
