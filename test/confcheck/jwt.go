package confcheck

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// JWT authentication (nginx/config/jwt.go): a location's access phase calls
// Gatewall's Lua with a filter's ID, which must be in the configuration's
// policies file; the policies are data the manager wrote (checked here
// again: nothing in them that the graph refuses), the claims' variables
// are Gatewall's own, emptied by the location before the Lua sets them.

var (
	jwtVerifyRE   = regexp.MustCompile(`^require\("gatewall\.jwt"\)\.verify\("([0-9a-f]{32})"\)$`)
	jwtClaimVarRE = regexp.MustCompile(`^gw_jwt_[0-9a-f]+$`)
	keySetIDRE    = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// luaJWTVerify: the verifying call of a filter the policies hold; the
// variables its policy sets into are declared.
func luaJWTVerify(c *checker, d *Directive) {
	m := jwtVerifyRE.FindStringSubmatch(d.Args[0].Value)
	if m == nil {
		c.fail(d, "access_by_lua_block %q is not Gatewall's", d.Args[0].Value)
		return
	}
	c.refer(d, config.JWTPoliciesFile)
	policies := c.jwtPolicies(d)
	p, ok := policies[m[1]]
	if !ok {
		c.fail(d, "access_by_lua_block: filter %s has no policy in %s", m[1], config.JWTPoliciesFile)
		return
	}
	for _, h := range p.Headers {
		c.use(d, "variable", h.Variable)
	}
}

// jwtPolicies reads the policies file once, checking every policy.
func (c *checker) jwtPolicies(at *Directive) jwks.Policies {
	if c.policies != nil {
		return c.policies
	}
	c.policies = jwks.Policies{}
	data, ok := c.files[config.JWTPoliciesFile]
	if !ok {
		return c.policies
	}
	var doc struct {
		Filters jwks.Policies `json:"filters"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		c.fail(at, "%s: %v", config.JWTPoliciesFile, err)
		return c.policies
	}
	if !bytes.Equal(doc.Filters.Encode(), data) {
		c.fail(at, "%s is not the policies' own encoding", config.JWTPoliciesFile)
	}
	for id, p := range doc.Filters {
		checkJWTPolicy(c, at, id, p)
	}
	c.policies = doc.Filters
	return c.policies
}

func checkJWTPolicy(c *checker, at *Directive, id string, p jwks.Policy) {
	fail := func(format string, args ...any) { c.fail(at, "JWT policy %s: "+format, append([]any{id}, args...)...) }
	if err := validation.BearerRealm(p.Realm); err != nil {
		fail("%v", err)
	}
	switch {
	case (p.Keys == nil) == (p.KeySet == ""):
		fail("keys or a key set, one of them")
	case p.KeySet != "" && !keySetIDRE.MatchString(p.KeySet):
		fail("key set %q", p.KeySet)
	case p.Keys != nil:
		checkKeySet(fail, *p.Keys)
	}
	if a := p.Authorization; a != nil {
		for _, r := range a.Rules {
			for _, m := range r.Claims {
				if m.Regex == "" {
					continue
				}
				inner := strings.TrimSuffix(strings.TrimPrefix(m.Regex, "^(?:"), ")$")
				if _, err := regexp.Compile(m.Regex); err != nil || !strings.HasPrefix(m.Regex, "^(?:") || validation.RegexValue("claim", inner) != nil {
					fail("regex %q is not an anchored expression validation accepts", m.Regex)
				}
			}
		}
	}
	for _, h := range p.Headers {
		if !jwtClaimVarRE.MatchString(h.Variable) {
			fail("variable %q is not a claim's", h.Variable)
		}
	}
}

// checkKeySet: every key of a set is usable as the Lua uses it.
func checkKeySet(fail func(string, ...any), s jwks.Set) {
	if len(s.Keys) == 0 || len(s.Keys) > jwks.MaxKeys || len(s.Encode()) > jwks.MaxSetBytes {
		fail("a key set of %d keys", len(s.Keys))
	}
	for i, k := range s.Keys {
		algs := jwks.Algorithms()
		for _, a := range k.Algs {
			family := map[string]string{"RS": jwks.TypeRSA, "PS": jwks.TypeRSA, "ES": jwks.TypeEC, "HS": jwks.TypeOct}[a[:2]]
			if !slices.Contains(algs, a) || family != k.Type {
				fail("key %d verifies %s, not an algorithm of its type %s", i+1, a, k.Type)
			}
		}
		if k.Type == jwks.TypeOct {
			if len(k.Secret) < 32 || k.DER != nil {
				fail("key %d: a secret of %d bytes", i+1, len(k.Secret))
			}
			continue
		}
		if _, err := x509.ParsePKIXPublicKey(k.DER); err != nil || k.Secret != nil {
			fail("key %d: its public key does not parse", i+1)
		}
	}
}

// jwtClaimVar is the value a set of a claim's variable names (its own
// name when it is one: set's switch compares them).
func jwtClaimVar(v string) string {
	if name, ok := strings.CutPrefix(v, "$"); ok && jwtClaimVarRE.MatchString(name) {
		return v
	}
	return "\x00"
}
