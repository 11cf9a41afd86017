package config

import (
	"regexp"
	"testing"
)

// TestCORSOriginRegex checks the regexes NGINX gets (PCRE, case-insensitive
// through "~*"; Go's regexp agrees on these) against Origin headers.
func TestCORSOriginRegex(t *testing.T) {
	cases := []struct {
		allowed string
		match   []string
		nomatch []string
	}{
		{"https://www.foo.com", []string{"https://www.foo.com", "HTTPS://WWW.FOO.COM"},
			[]string{"http://www.foo.com", "https://www.foo.com:8443", "https://wwwxfoo.com", "https://www.foo.com.evil.org", "https://a.www.foo.com"}},
		{"https://*.bar.com", []string{"https://www.bar.com", "https://xpto.www.bar.com"},
			[]string{"https://bar.com", "https://www.bar.com:1", "https://evil.com/.bar.com", "https://evil.com#.bar.com", "http://www.bar.com"}},
		{"http://*", []string{"http://a", "http://a.b.c"}, []string{"https://a", "http://a:80"}},
		{"https://api.example.com:8443", []string{"https://api.example.com:8443"}, []string{"https://api.example.com", "https://api.example.com:84430"}},
		{"*", []string{"https://foobar.com", "https://foobar.com:12345", "http://x"}, []string{"null", "https://a b", "file:///etc"}},
	}
	for _, c := range cases {
		re := regexp.MustCompile("(?i)" + corsOriginRegex(c.allowed))
		for _, o := range c.match {
			if !re.MatchString(o) {
				t.Errorf("%s: %q does not match, want a match (regex %s)", c.allowed, o, re)
			}
		}
		for _, o := range c.nomatch {
			if re.MatchString(o) {
				t.Errorf("%s: %q matches, want none (regex %s)", c.allowed, o, re)
			}
		}
	}
}
