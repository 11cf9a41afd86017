package config

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/jwks"
)

// JWT authentication on NGINX OSS: a location whose rule names a JWT
// AuthenticationFilter verifies the request's token in its access phase
// with Gatewall's Lua (lua/gatewall/jwt.lua). The location's Lua block
// holds the filter's ID only; what the filter asks is data (jwks.Policy)
// in one file of the configuration's policies (JWTPoliciesFile, a secret
// file: it holds HMAC secrets), which NGINX reads when it loads the
// configuration. A remote key set is named in a policy by its source's ID
// (endpoints.KeySource.ID): the data plane's endpoints client fetches it
// and hands it to the shared dict gatewall_jwks (Config.KeySources says
// which to fetch). Claims forwarded to the backend are set by the Lua
// into variables of Gatewall's ($gw_jwt_...), declared empty by the
// location, which the request headers carry.

// Paths and sizes of JWT authentication on the data plane.
const (
	// JWTPoliciesFile is the configuration's policies (jwks.Policies).
	JWTPoliciesFile = SecretsDir + "jwt-policies.json"
	// KeySetsStateFile is where the endpoints client keeps the remote key
	// sets, which a starting NGINX loads; KeySetsPath the control location
	// it hands them to, on EndpointsSocket.
	KeySetsStateFile = endpoints.KeySetsStateFile
	KeySetsPath      = endpoints.KeySetsPath
	// keySetsDict holds the remote key sets: MaxKeySources sets of at most
	// jwks.MaxSetBytes, 4 MiB, with room for the slab allocator's pages
	// (TestKeySetsDictHoldsTheMost, test/auth). Its size never changes,
	// so a reload keeps its content.
	keySetsDict     = "gatewall_jwks"
	keySetsDictSize = "8m"
)

// jwtIDKind names a filter's ID; IDs are not names of the configuration.
var jwtIDKind = nameKind{prefix: "jwt-filter:"}

// JWTFilterID is the ID of a JWT AuthenticationFilter in the configuration
// and its policies: 32 hex digits of the SHA-256 of its name.
func JWTFilterID(filter types.NamespacedName) string {
	return digest(identity(jwtIDKind, []string{filter.Namespace, filter.Name}))[:endpoints.IDLength]
}

// jwtVerifyCall is the access_by_lua_block of a location a JWT filter
// authenticates.
func jwtVerifyCall(id string) string { return `require("gatewall.jwt").verify("` + id + `")` }

// jwtAuth writes a JWT filter's authentication: the location's access
// directives (the claims' variables declared empty, the Lua verifying
// the token) and the headers carrying claims to the backend. It records
// the filter's policy, and its remote key set's source.
func (b *builder) jwtAuth(a *graph.Authentication, prefix string) (access, headers []Directive) {
	j := a.JWT
	id := JWTFilterID(a.Filter.Key)
	p := jwks.Policy{Realm: j.Realm, LeewayMillis: j.Leeway.Milliseconds(), Keys: j.Keys, Authorization: j.Authorization}
	origins := []string{"AuthenticationFilter " + a.Filter.Key.String()}
	if j.Keys != nil {
		origins = append(origins, "Secret "+j.Secret.String())
	}
	if j.Remote != nil {
		src := *j.Remote
		p.KeySet = src.ID()
		if have, ok := b.keySources[p.KeySet]; ok && have.Refresh() < src.Refresh() {
			src.RefreshMillis = have.RefreshMillis // filters sharing a set: the most often
		}
		b.keySources[p.KeySet] = src
	}
	for _, h := range j.Headers {
		v := b.names.of(kindJWTClaimVar, a.Filter.Key.Namespace, a.Filter.Key.Name, h.Claim)
		p.Headers = append(p.Headers, jwks.Header{Path: jwks.ClaimPath(h.Claim), Variable: strings.TrimPrefix(v, "$")})
		access = append(access, D("set", v, `""`))
		headers = append(headers, D(prefix+"_set_header", h.Header, v))
	}
	b.jwtPolicies[id] = p
	for _, o := range origins {
		if !slices.Contains(b.jwtOrigins, o) {
			b.jwtOrigins = append(b.jwtOrigins, o)
		}
	}
	return append(access, D("access_by_lua_block", jwtVerifyCall(id))), headers
}

// finishJWT writes the policies file, when a filter needs it, and the key
// sources.
func (b *builder) finishJWT() {
	if len(b.jwtPolicies) > 0 {
		b.addCert(JWTPoliciesFile, b.jwtPolicies.Encode(), b.jwtOrigins...)
	}
	if len(b.keySources) > 0 {
		b.cfg.keySources = b.keySources
	}
}

// KeySources are the remote key sets the configuration's JWT filters verify
// with, which the data plane fetches (sent with the endpoints); nil when
// there are none.
func (c *Config) KeySources() endpoints.KeySources {
	if len(c.keySources) == 0 {
		return nil
	}
	return maps.Clone(c.keySources)
}

// luaInitJWT is the part of init_by_lua_block loading the policies and the
// remote key sets a previous NGINX of the pod left.
func luaInitJWT() string {
	return `require("gatewall.jwt").init("` + JWTPoliciesFile + `", "` + KeySetsStateFile + `")`
}
