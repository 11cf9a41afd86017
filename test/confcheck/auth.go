package confcheck

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// Authentication (nginx/config/auth.go): Basic's realm and file of users,
// ExternalAuth's subrequests to internal locations, the headers their
// answers give, and the body read for them.

// authBodyVar holds the body sent to an authorization service.
const authBodyVar = "$gw_auth_body"

// usersFilePrefix starts the paths of Basic's files of users.
const usersFilePrefix = config.SecretsDir + "htpasswd_"

// authBasic: the realm, whose quoted-string escapes the renderer added
// (config.RealmValue), must be one validation allows.
func authBasic(c *checker, d *Directive) {
	v := d.Args[0].Value
	realm := strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(v)
	if config.RealmValue(realm) != v {
		c.fail(d, "auth_basic %q: a quote or backslash not escaped for the header", v)
	}
	if err := validation.Realm(realm); err != nil {
		c.fail(d, "auth_basic: %v", err)
	}
}

// usersFile: a file of users the renderer wrote, every line checked and
// written anew (validation.Htpasswd), nothing else in it.
func usersFile(c *checker, d *Directive) {
	p := d.Args[0].Value
	if !strings.HasPrefix(p, usersFilePrefix) {
		c.fail(d, "auth_basic_user_file %q is not a file of users", p)
		return
	}
	c.refer(d, p)
	data, ok := c.files[p]
	if !ok {
		return
	}
	users, err := validation.Htpasswd(data)
	switch {
	case err != nil:
		c.fail(d, "auth_basic_user_file %s: %v", p, err)
	case !bytes.Equal(validation.HtpasswdFile(users), data):
		c.fail(d, "auth_basic_user_file %s is not written anew from its checked lines", p)
	}
}

// authRequest asks an internal location of the server.
func authRequest(c *checker, d *Directive) {
	p := d.Args[0].Value
	if !strings.HasPrefix(p, config.InternalPrefix+"auth/") {
		c.fail(d, "auth_request to %q, not an internal authorization location", p)
	}
	c.useLocation(d, p)
}

// authRequestSet takes a header of the authorization service's answer
// into a variable of Gatewall's.
func authRequestSet(c *checker, d *Directive) {
	v, from := d.Args[0].Value, d.Args[1].Value
	if !strings.HasPrefix(v, "$gw_ea_") {
		c.fail(d, "auth_request_set into %q, not an authorization header variable", v)
	}
	c.define(d, v)
	name, ok := strings.CutPrefix(from, "$upstream_http_")
	if !ok || validation.HeaderName(strings.ReplaceAll(name, "_", "-")) != nil {
		c.fail(d, "auth_request_set from %q, not a header of the answer", from)
	}
}

// authBody sends the body the location read.
func authBody(c *checker, d *Directive) {
	if d.Args[0].Value != authBodyVar {
		c.fail(d, "proxy_set_body %q", d.Args[0].Value)
	}
	c.variablesIn(d, d.Args[0].Value)
}

var luaMaxRE = regexp.MustCompile(`^local max = ([1-9][0-9]{0,4}) `)

// luaForwardBody: Gatewall's body reading, with a size from 1 to 65535.
func luaForwardBody(c *checker, d *Directive) {
	code := d.Args[0].Value
	m := luaMaxRE.FindStringSubmatch(code)
	n := 0
	if m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if n < 1 || n > 65535 || code != config.ForwardBodyLua(n) {
		c.fail(d, "rewrite_by_lua_block %q is not Gatewall's", code)
	}
	c.use(d, "variable", strings.TrimPrefix(authBodyVar, "$"))
}
