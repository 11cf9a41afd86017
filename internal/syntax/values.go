package syntax

import (
	"sort"
	"strings"
)

// Header values reach NGINX in directives whose arguments NGINX
// interpolates (proxy_set_header, grpc_set_header, add_header, map
// values): every '$' starts a variable there, and NGINX 1.22 has no escape
// for a literal '$'. So a header value is written with its NGINX variables
// of the allow-list below as variables, and every other '$' as
// ${gw_dollar}, a variable whose value is "$" (http.conf declares it with
// geo, whose values NGINX does not interpolate). Nothing else in a value
// means anything to NGINX inside a double-quoted string but '"' and '\',
// which Quote escapes: ';', '{', '}', '#', spaces and quotes are text
// there.

// DollarVariable is the variable holding a literal "$".
const DollarVariable = "gw_dollar"

// valueVariables are the NGINX variables a header value may read: facts
// NGINX takes from the connection and the request line or sets itself,
// none of which can hold a control character or a secret, and three
// request headers the client sent. docs/validation.md says why each is
// there and why others are not (among them $uri, which NGINX decodes: a
// %0D%0A in the path would become a line break in a header).
var valueVariables = map[string]bool{
	"args": true, "connection": true, "connection_requests": true, "host": true,
	"http_referer": true, "http_user_agent": true, "http_x_forwarded_for": true,
	"https": true, "is_args": true, "msec": true, "proxy_add_x_forwarded_for": true,
	"remote_addr": true, "remote_port": true, "request_id": true, "request_method": true,
	"request_uri": true, "scheme": true, "server_protocol": true, "ssl_cipher": true,
	"ssl_protocol": true, "time_iso8601": true,
}

// ValueVariable says whether a header value may read NGINX's variable
// name (without '$').
func ValueVariable(name string) bool { return valueVariables[name] }

// ValueVariables lists the variables a header value may read, sorted.
func ValueVariables() []string {
	out := make([]string, 0, len(valueVariables))
	for v := range valueVariables {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// HeaderValue is the NGINX string, to be written with Quote, that makes
// NGINX send the header value v: v's text as it is, a variable of
// ValueVariable's list (written $name or ${name}, name read as NGINX reads
// one: letters, digits and '_') as ${name}, and every other '$' as
// ${gw_dollar}. Every variable is written with braces, so the text after
// it never extends its name.
func HeaderValue(v string) string {
	if !strings.Contains(v, "$") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		if v[i] != '$' {
			j := strings.IndexByte(v[i:], '$')
			if j < 0 {
				j = len(v) - i
			}
			b.WriteString(v[i : i+j])
			i += j
			continue
		}
		name, n := variableAt(v[i:])
		if ValueVariable(name) {
			b.WriteString("${" + name + "}")
			i += n
			continue
		}
		b.WriteString("${" + DollarVariable + "}")
		i++
	}
	return b.String()
}

// variableAt reads the variable at the start of s (s[0] is '$'): its name
// and how many bytes it takes, $name or ${name}; "" when s starts none.
func variableAt(s string) (string, int) {
	braced := strings.HasPrefix(s, "${")
	start := 1
	if braced {
		start = 2
	}
	end := start
	for end < len(s) && isNameByte(s[end]) {
		end++
	}
	switch {
	case end == start:
		return "", 0
	case !braced:
		return s[start:end], end
	case end < len(s) && s[end] == '}':
		return s[start:end], end + 1
	}
	return "", 0
}

// isNameByte says whether c may be part of an NGINX variable's name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// ReadHeaderValue is the inverse of HeaderValue for what it writes: the
// header value whose NGINX string s is, with each variable written
// ${name}. ok is false when s is not a string HeaderValue writes: a '$'
// that does not start ${name} of the allow-list or ${gw_dollar}.
func ReadHeaderValue(s string) (v string, ok bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		name, n := variableAt(s[i:])
		switch {
		case n == 0 || s[i+1] != '{':
			return "", false
		case name == DollarVariable:
			b.WriteByte('$')
		case ValueVariable(name):
			b.WriteString(s[i : i+n])
		default:
			return "", false
		}
		i += n
	}
	return b.String(), true
}

// AppendedHeaderValue is the value NGINX sends for a header whose value is
// appended to the request's own, comma-separated: the request's header,
// then value written as HeaderValue writes it.
func AppendedHeaderValue(name, value string) string {
	return HeaderVariable(name) + "," + HeaderValue(value)
}
