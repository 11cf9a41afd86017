package confcheck

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// The Lua of the configuration (nginx/config/lua.go) is Gatewall's own:
// each *_by_lua_block holds one of these forms, with no user text in it.
var (
	balanceRE = regexp.MustCompile(`^require\("gatewall\.balancer"\)\.balance\("([0-9a-f]{32})", "(round_robin|least_conn|ip_hash|hash|hash_consistent|random|random_two)"\)$`)
	luaInitRE = regexp.MustCompile(`^require\("gatewall\.endpoints"\)\.init\("` + regexp.QuoteMeta(config.EndpointsStateFile) +
		`", ` + strconv.Itoa(endpoints.MaxEndpointsPerUpstream) + `\) require\("gatewall\.balancer"\)\.configure\([1-9][0-9]?, [1-9][0-9]*\) ` +
		`require\("gatewall\.jwt"\)\.init\("` + regexp.QuoteMeta(config.JWTPoliciesFile) + `", "` + regexp.QuoteMeta(config.KeySetsStateFile) + `"\)$`)
	luaLog         = `require("gatewall.balancer").log()`
	luaReady       = `require("gatewall.endpoints").ready()`
	luaServe       = `require("gatewall.endpoints").serve()`
	luaServeKeySet = `require("gatewall.keysets").serve()`
	luaModules     = []string{config.LuaDir + "gatewall/balancer.lua", config.LuaDir + "gatewall/endpoints.lua",
		config.LuaDir + "gatewall/jwt.lua", config.LuaDir + "gatewall/jwtcrypto.lua", config.LuaDir + "gatewall/keysets.lua"}
)

// luaPackagePath: the modules' directory, whose files it refers to.
func luaPackagePath(c *checker, d *Directive) {
	if d.Args[0].Value != config.LuaDir+"?.lua;;" {
		c.fail(d, "lua_package_path %q", d.Args[0].Value)
	}
	for _, m := range luaModules {
		c.refer(d, m)
	}
}

func luaSharedDict(c *checker, d *Directive) {
	if w := strings.Join(d.values(), " "); w != "gatewall_endpoints 32m" && w != "gatewall_balancer 16m" && w != "gatewall_jwks 8m" {
		c.fail(d, "lua_shared_dict %s", w)
	}
}

func luaInit(c *checker, d *Directive) {
	if !luaInitRE.MatchString(d.Args[0].Value) {
		c.fail(d, "init_by_lua_block %q is not Gatewall's", d.Args[0].Value)
	}
}

func luaLogPhase(c *checker, d *Directive) {
	if d.Args[0].Value != luaLog {
		c.fail(d, "log_by_lua_block %q is not Gatewall's", d.Args[0].Value)
	}
}

// luaBalancer: the balancer's call with the upstream's ID, whose hash
// methods read their key from $gw_hash_<ID>.
func luaBalancer(c *checker, d *Directive) {
	m := balanceRE.FindStringSubmatch(d.Args[0].Value)
	if m == nil {
		c.fail(d, "balancer_by_lua_block %q is not Gatewall's", d.Args[0].Value)
		return
	}
	if m[2] == "hash" || m[2] == "hash_consistent" {
		c.use(d, "variable", "gw_hash_"+m[1])
	}
}

// luaContent: the readiness answer, or the endpoints server's (endpoints
// and key sets).
func luaContent(c *checker, d *Directive) {
	if v := d.Args[0].Value; v != luaReady && v != luaServe && v != luaServeKeySet {
		c.fail(d, "content_by_lua_block %q is not Gatewall's", v)
	}
}

// hashKey is the value of a hash method's key map: an allowed variable.
func hashKey(c *checker, d *Directive, v Arg) {
	key := v.Value
	if !strings.HasPrefix(key, "$") || !validation.RateLimitKeyVariable(key[1:]) {
		c.fail(d, "hash key %q is not an allowed variable", key)
	}
}
