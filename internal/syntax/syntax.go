// Package syntax is how Gatewall writes values into NGINX's configuration
// language, and what NGINX's configuration parser can read: one quoting
// function (Quote), and how a header value is written where NGINX
// interpolates variables, with the allow-list of the variables it may read
// (values.go). The graph uses
// it to refuse a value that would not fit, with the status of the object
// carrying it saying why; the renderer (package config) uses it to write
// the value. Check and output are the same code, so they cannot disagree.
//
// It also reads configuration text that users write (Read: the snippets
// of SnippetsFilters and SnippetsPolicies) token by token as NGINX does,
// refusing what NGINX would read otherwise than a person does, and
// writes directives back (Format) so that they read the same.
//
// The package is pure and has no dependencies on the rest of Gatewall.
package syntax

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxToken is the longest token, in bytes as written (escapes included,
// surrounding quotes not), that NGINX 1.22 reads wherever it stands in a
// file. NGINX reads configuration through a 4,096-byte buffer and a token
// in progress must fit in it together with its closing quote and the next
// two characters: 4,094 bytes make `nginx -t` fail with "too long
// parameter".
const MaxToken = 4093

// Quote returns s as an NGINX double-quoted string. Values reaching it have
// passed package validation's allow-lists; Quote escapes the two characters
// the configuration parser treats specially inside double quotes ('"' and
// '\'; it reads "\t", "\r" and "\n" as control characters, so a
// backslash must not reach it alone), so that no value can end the string
// early and the parser reads back exactly s. Inside double quotes ';', '{',
// '}', '#' and whitespace are text. '$' is not, where NGINX interpolates
// (values.go). It is the one quoting function of Gatewall's NGINX
// configuration.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// QuotedLength is the length of s written with Quote, quotes excluded.
func QuotedLength(s string) int {
	return len(s) + strings.Count(s, `"`) + strings.Count(s, `\`)
}

// CheckToken says why s, written with Quote, would not fit in one NGINX
// token; what names the value for the message. Nil when it fits.
func CheckToken(what, s string) error {
	if n := QuotedLength(s); n > MaxToken {
		return fmt.Errorf("%s takes %d bytes in NGINX's configuration, more than the %d NGINX reads in one token", what, n, MaxToken)
	}
	return nil
}

// MatchKey is the key of a map entry matching regex case-sensitively (to
// be written with Quote).
func MatchKey(regex string) string { return "~" + regex }

// ExactRegex matches a whole value exactly.
func ExactRegex(v string) string { return "^" + regexp.QuoteMeta(v) + "$" }

// ValueRegex matches a header value exactly, or (regex) by the user's expression.
func ValueRegex(value string, regex bool) string {
	if regex {
		return value
	}
	return ExactRegex(value)
}

// QueryRegex matches $args when the first parameter named name has the
// wanted value: it skips parameters with other names, then requires the
// value, exactly or (regex) by the user's expression.
func QueryRegex(name, value string, regex bool) string {
	n := regexp.QuoteMeta(name)
	v := regexp.QuoteMeta(value)
	if regex {
		v = "(?:" + value + ")"
	}
	return "^(?:(?!" + n + "=)[^&]*&)*" + n + "=" + v + "(?:&|$)"
}

// HeaderVariable is NGINX's variable for a request header: $http_ with the
// name lower-cased and '-' turned into '_'.
func HeaderVariable(name string) string {
	return "$http_" + strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

// HeaderList is a header value listing values, as CORS headers list
// methods and header names.
func HeaderList(values []string) string { return strings.Join(values, ", ") }
