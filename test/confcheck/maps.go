package confcheck

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// mapKind is what the renderer puts in one family of maps, told apart by
// the variable's prefix.
type mapKind struct {
	prefix string
	// key checks one key (as NGINX reads it, with a regex's ~ or ~*).
	key func(c *checker, d *Directive, source, key string)
	// value checks one value or the default.
	value func(c *checker, d *Directive, v Arg)
}

// mapKinds are every map the renderer writes; longer prefixes first.
var mapKinds = []mapKind{
	{"gw_sni_listener_", hostnameKey, listenerID},
	{"gw_tlsport_", hostnameKey, tlsDestination},
	{"gw_tlsver_", tlsVersionKey, fixedValue("", "1")},
	{"gw_tlsgroup_", tlsGroupKey, fixedValue("", "1")},
	{"gw_c_", conditionKey, fixedValue("0", "1")},
	{"gw_l_", dispatchKey, internalLocation},
	{"gw_rp_", compiledRegexKey, rewrittenPath},
	{"gw_request_path", compiledRegexKey, anyExpr},
	{"gw_cors_o_", compiledRegexKey, anyExpr},
	{"gw_cors_preflight", compiledRegexKey, fixedValue("1", "")},
	{"gw_cors_pf_", compiledRegexKey, fixedValue("1", "")},
	{"gw_cors_c_", emptyKey, fixedValue("", "true")},
	{"gw_cors_e_", emptyKey, headerNames},
	{"gw_add_", emptyKey, headerValue},
	{"gw_bsplit_", indexKey, upstreamValue},
	{"gw_bh_", indexKey, headerValue},
	{"gw_connection", emptyKey, anyExpr},
	{"gw_host", emptyKey, anyExpr},
	{"gw_server_port", emptyKey, anyExpr},
	{"gw_hash_", emptyKey, hashKey},
	{"gw_loop_in", loopKey, fixedValue("0", "1")},
	// Tracing (nginx/config/tracing.go).
	{"gw_traceparent_in", compiledRegexKey, anyExpr},
	{"gw_traceparent_out", emptyKey, traceparentValue},
	{"gw_tracestate_out", emptyKey, fixedValue("", "$http_tracestate")},
	{"gw_trace_new", compiledRegexKey, anyExpr},
	{"gw_span_new", compiledRegexKey, anyExpr},
	{"otel_", compiledRegexKey, anyExpr},
	{"gw_loop_out", emptyKey, loopValue},
}

// loopIDRE is a Gateway's ID in the loop header (config.LoopID).
var loopIDRE = `[0-9a-f]{16}`

// loopKey is the absent loop header (an exact key, found before any
// regex is tried), the loop header naming this Gateway, or grown too long.
var loopKeyRE = regexp.MustCompile(`^(|~(\(\^\|,\)` + loopIDRE + `\(,\|\$\)|\^\.\{[0-9]+\}))$`)

func loopKey(c *checker, d *Directive, _, key string) {
	if !loopKeyRE.MatchString(key) {
		c.fail(d, "loop map key %q", key)
	}
}

// loopValueRE is the loop header a request goes on with: this Gateway's
// ID, after the header it came with.
var loopValueRE = regexp.MustCompile(`^(\$http_x_gatewall_loop,)?` + loopIDRE + `$`)

func loopValue(c *checker, d *Directive, v Arg) {
	if !loopValueRE.MatchString(v.Value) {
		c.fail(d, "loop header value %q", v.Value)
	}
}

// mapBlock checks a map: source, variable, and every entry.
func mapBlock(c *checker, d *Directive) {
	source, variable := d.Args[0].Value, d.Args[1].Value
	c.variablesIn(d, source)
	c.defineOnce(d, variable)
	var kind *mapKind
	for i := range mapKinds {
		if strings.HasPrefix(variable, "$"+mapKinds[i].prefix) {
			kind = &mapKinds[i]
			break
		}
	}
	if kind == nil {
		c.fail(d, "map of %s: not a map the renderer writes", variable)
		return
	}
	keys := map[string]bool{}
	hasDefault := false
	for i, e := range d.Block {
		switch {
		case e.Block != nil:
			c.fail(e, "block in a map")
		case e.Name == "hostnames" && !e.NameQuoted && len(e.Args) == 0 && i == 0:
		case len(e.Args) != 1:
			c.fail(e, "map entry %q has %d values", e.Name, len(e.Args))
		case e.Name == "default" && !e.NameQuoted:
			if hasDefault {
				c.fail(e, "map of %s: two defaults", variable)
			}
			hasDefault = true
			kind.value(c, e, e.Args[0])
		default:
			key := e.Name
			if !e.NameQuoted && strings.HasPrefix(key, `\`) {
				key = key[1:] // NGINX drops one leading backslash of a key
			}
			// NGINX refuses a repeated key, but not a repeated regex.
			if keys[key] && !strings.HasPrefix(key, "~") {
				c.fail(e, "map of %s: duplicate key %q", variable, key)
			}
			keys[key] = true
			kind.key(c, e, source, key)
			kind.value(c, e, e.Args[0])
		}
	}
}

func hostnameKey(c *checker, d *Directive, _, key string) {
	if err := validation.Hostname(key); err != nil {
		c.fail(d, "hostnames map key: %v", err)
	}
}

// tlsSocketRE is the socket a TLS connection is passed to by its server
// name: a passthrough server's, the closing server's, or a port's HTTPS servers'.
var tlsSocketRE = regexp.MustCompile(`^unix:` + regexp.QuoteMeta(config.RunDir) + `(tlspass-[0-9a-f]{12}|tlspass-[0-9a-f]{64}(_[0-9]+)?|tls-reject|port-[0-9]+-tls)\.sock$`)

func tlsDestination(c *checker, d *Directive, v Arg) {
	if !tlsSocketRE.MatchString(v.Value) {
		c.fail(d, "TLS destination %q", v.Value)
	}
}

// listenerID is a listener's name, or namespace/set/name of a ListenerSet's.
func listenerID(c *checker, d *Directive, v Arg) {
	if v.Value == "" {
		return
	}
	parts := strings.Split(v.Value, "/")
	if len(parts) != 1 && len(parts) != 3 {
		c.fail(d, "listener ID %q", v.Value)
		return
	}
	for _, p := range parts {
		if err := validation.ObjectReference("a", p); err != nil {
			c.fail(d, "listener ID %q: %v", v.Value, err)
		}
	}
}

func fixedValue(allowed ...string) func(*checker, *Directive, Arg) {
	return func(c *checker, d *Directive, v Arg) {
		if !contains(allowed, v.Value) {
			c.fail(d, "map value %q: not one of %q", v.Value, allowed)
		}
	}
}

func anyExpr(c *checker, d *Directive, v Arg) { c.variablesIn(d, v.Value) }

// conditionKey is the regex of a method, header or query condition, with
// the user's value in it.
func conditionKey(c *checker, d *Directive, source, key string) {
	re, ok := strings.CutPrefix(key, "~")
	if !ok {
		c.fail(d, "condition key %q is not a regex", key)
		return
	}
	switch {
	case source == "$request_method":
		inner := strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
		if err := validation.HTTPMethod(unquoteMeta(inner)); err != nil || "^"+inner+"$" != re {
			c.fail(d, "method condition %q", re)
		}
	case source == "$args":
		queryCondition(c, d, re)
	case strings.HasPrefix(source, "$http_"):
		inner := strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
		if "^"+inner+"$" == re && isQuoteMeta(inner) && validation.HeaderValue(unquoteMeta(inner)) == nil {
			return // an exact match
		}
		if err := validation.HeaderValueRegex(re); err != nil {
			c.fail(d, "header condition: %v", err)
		}
	default:
		c.fail(d, "condition on %s", source)
	}
}

// queryConditionRE is the regex matching the first parameter of a name:
// skip parameters named otherwise, then name=value.
var queryConditionRE = regexp.MustCompile(`^\^\(\?:\(\?!([^=]*)=\)\[\^&\]\*&\)\*([^=]*)=(.*)\(\?:&\|\$\)$`)

func queryCondition(c *checker, d *Directive, re string) {
	m := queryConditionRE.FindStringSubmatch(re)
	if m == nil || m[1] != m[2] || !isQuoteMeta(m[1]) {
		c.fail(d, "query condition %q", re)
		return
	}
	if err := validation.QueryParamName(unquoteMeta(m[1])); err != nil {
		c.fail(d, "query condition: %v", err)
	}
	value := m[3]
	if inner, ok := strings.CutPrefix(value, "(?:"); ok && strings.HasSuffix(inner, ")") {
		if err := validation.RegexValue("query parameter value", strings.TrimSuffix(inner, ")")); err != nil {
			c.fail(d, "query condition: %v", err)
		}
		return
	}
	if !isQuoteMeta(value) {
		c.fail(d, "query condition value %q", value)
		return
	}
	if err := validation.QueryParamValue(unquoteMeta(value)); err != nil {
		c.fail(d, "query condition: %v", err)
	}
}

var dispatchKeyRE = regexp.MustCompile(`^~\^[.1]+\$$`)

func dispatchKey(c *checker, d *Directive, _, key string) {
	if !dispatchKeyRE.MatchString(key) {
		c.fail(d, "dispatch key %q", key)
	}
}

func internalLocation(c *checker, d *Directive, v Arg) {
	if !strings.HasPrefix(v.Value, config.InternalPrefix) {
		c.fail(d, "dispatch to %q, not an internal location", v.Value)
	}
	c.use(d, "location", v.Value)
}

// namedGroupRE finds the named groups of a regex the renderer writes;
// NGINX makes them variables.
var namedGroupRE = regexp.MustCompile(`\(\?P?<([A-Za-z0-9_]+)>`)

// compiledRegexKey is a key the renderer generates: a regex that compiles,
// whose named groups define variables, or a plain string.
func compiledRegexKey(c *checker, d *Directive, _, key string) {
	re, ok := strings.CutPrefix(key, "~*")
	if !ok {
		re, ok = strings.CutPrefix(key, "~")
	}
	if !ok {
		return
	}
	if _, err := regexp.Compile(re); err != nil {
		c.fail(d, "map key %q does not compile: %v", key, err)
	}
	for _, m := range namedGroupRE.FindAllStringSubmatch(re, -1) {
		c.define(d, "$"+m[1])
	}
}

// rewrittenPath is a path with its prefix replaced: literal path, then
// what followed the prefix.
func rewrittenPath(c *checker, d *Directive, v Arg) {
	c.variablesIn(d, v.Value)
	literal := strings.TrimSuffix(v.Value, "$gw_rest")
	if literal == "" || literal == "/" {
		return
	}
	if err := validation.Path(literal); err != nil {
		c.fail(d, "rewritten path: %v", err)
	}
}

func emptyKey(c *checker, d *Directive, _, key string) {
	if key != "" {
		c.fail(d, "map key %q, want \"\"", key)
	}
}

// tlsVersionKey is a protocol a listener allows ($ssl_protocol's words).
func tlsVersionKey(c *checker, d *Directive, source, key string) {
	if source != "$ssl_protocol" || !contains(validation.TLSProtocols, key) {
		c.fail(d, "map of %s: key %q is not a protocol", source, key)
	}
}

// tlsGroupKey is a group a listener allows ($ssl_curve's names), or none.
func tlsGroupKey(c *checker, d *Directive, source, key string) {
	if key == "" && source == "$ssl_curve" {
		return
	}
	if groups, _, err := validation.ParseTLSGroups(key); source != "$ssl_curve" || err != nil || len(groups) != 1 || groups[0] != key {
		c.fail(d, "map of %s: key %q is not a group's name", source, key)
	}
}

func indexKey(c *checker, d *Directive, _, key string) {
	if _, err := strconv.Atoi(key); err != nil {
		c.fail(d, "map key %q, want a backend index", key)
	}
}

func headerNames(c *checker, d *Directive, v Arg) {
	if v.Value == "" {
		return
	}
	for _, n := range strings.Split(v.Value, ", ") {
		if n != "*" {
			if err := validation.HeaderName(n); err != nil {
				c.fail(d, "exposed header: %v", err)
			}
		}
	}
}

func headerValue(c *checker, d *Directive, v Arg) { headerValueExpr(c, d, v) }

// upstreamValue names the upstream of a drawn backend; the default ("")
// is never used, every index has its entry.
func upstreamValue(c *checker, d *Directive, v Arg) {
	if v.Value != "" {
		c.use(d, "upstream", v.Value)
	}
}

var shareRE = regexp.MustCompile(`^([0-9]+)\.([0-9]{2})%$`)

// splitBlock checks a split_clients block: shares that add up to at most
// 100%, the last one "*", each naming an upstream or a backend index.
func splitBlock(c *checker, d *Directive) {
	key := "$request_id"
	switch {
	case c.ctx == ctxStream && strings.HasPrefix(d.Args[1].Value, "$gw_l4_split_"):
		// A TCP or UDP listener's client connects to NGINX itself.
		key = "$remote_addr:$remote_port"
	case c.ctx == ctxStream:
		// A TLS passthrough server's client is the PROXY header's.
		key = "$proxy_protocol_addr:$proxy_protocol_port"
	}
	if d.Args[0].Value != key {
		c.fail(d, "split_clients on %q", d.Args[0].Value)
	}
	c.variablesIn(d, d.Args[0].Value)
	c.defineOnce(d, d.Args[1].Value)
	total := 0
	for i, e := range d.Block {
		if len(e.Args) != 1 || e.Block != nil {
			c.fail(e, "split_clients entry")
			continue
		}
		if e.Name == "*" {
			if i != len(d.Block)-1 {
				c.fail(e, "split_clients: \"*\" before the last entry")
			}
		} else if m := shareRE.FindStringSubmatch(e.Name); m == nil {
			c.fail(e, "split_clients share %q", e.Name)
		} else {
			whole, _ := strconv.Atoi(m[1])
			frac, _ := strconv.Atoi(m[2])
			total += whole*100 + frac
		}
		if v := e.Args[0].Value; c.ctx == ctxStream && (tlsSocketRE.MatchString(v) || v == udpClosed) {
			// The share of a backend that cannot serve is closed (dropped).
			if v == udpClosed {
				c.use(e, "upstream", v)
			}
		} else if !strings.HasPrefix(d.Args[1].Value, "$gw_bidx_") {
			c.use(e, "upstream", v)
		} else if _, err := strconv.Atoi(v); err != nil {
			c.fail(e, "split_clients backend index %q", v)
		}
	}
	if total > 10000 {
		c.fail(d, "split_clients shares add up to %d.%02d%%", total/100, total%100)
	}
}
