package syntax_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/syntax"
)

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"a b", `"a b"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
	}
	for _, c := range cases {
		if got := syntax.Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
		if got, want := syntax.QuotedLength(c.in), len(syntax.Quote(c.in))-2; got != want {
			t.Errorf("QuotedLength(%q) = %d, want %d", c.in, got, want)
		}
	}
}

func TestCheckToken(t *testing.T) {
	cases := []struct {
		name string
		s    string
		ok   bool
	}{
		{"longest", strings.Repeat("a", syntax.MaxToken), true},
		{"one more", strings.Repeat("a", syntax.MaxToken+1), false},
		{"escapes count", strings.Repeat("a", syntax.MaxToken-1) + `\`, false},
	}
	for _, c := range cases {
		err := syntax.CheckToken("value", c.s)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "value takes 4094 bytes") {
			t.Errorf("%s: message %q", c.name, err)
		}
	}
}

func TestHeaderValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{`a"b\c;{d} #e`, `a"b\c;{d} #e`}, // Quote's to escape
		{"$remote_addr", "${remote_addr}"},
		{"${request_id}", "${request_id}"},
		{"ip=$remote_addr:$remote_port;", "ip=${remote_addr}:${remote_port};"},
		{"$request_method$request_uri", "${request_method}${request_uri}"},
		// Names are read as NGINX reads them: the longest run of name
		// characters, so text after a variable needs braces.
		{"$remote_addrx", "${gw_dollar}remote_addrx"},
		{"${remote_addr}x", "${remote_addr}x"},
		{"$remote_addr-x", "${remote_addr}-x"},
		// Any other '$' is a literal '$'.
		{"$", "${gw_dollar}"},
		{"$$", "${gw_dollar}${gw_dollar}"},
		{"$$host", "${gw_dollar}${host}"},
		{"$foo", "${gw_dollar}foo"},
		{"${foo}", "${gw_dollar}{foo}"},
		{"${remote_addr", "${gw_dollar}{remote_addr"},
		{"${", "${gw_dollar}{"},
		{"$1", "${gw_dollar}1"},
		{"$uri", "${gw_dollar}uri"},
		{"$http_cookie", "${gw_dollar}http_cookie"},
		{"$gw_dollar", "${gw_dollar}gw_dollar"},
		{"${gw_dollar}", "${gw_dollar}{gw_dollar}"},
		{"$Remote_Addr", "${gw_dollar}Remote_Addr"},
		{"price: 5$", "price: 5${gw_dollar}"},
	}
	for _, c := range cases {
		got := syntax.HeaderValue(c.in)
		if got != c.want {
			t.Errorf("HeaderValue(%q) = %q, want %q", c.in, got, c.want)
		}
		back, ok := syntax.ReadHeaderValue(got)
		if !ok {
			t.Errorf("ReadHeaderValue(%q) refused what HeaderValue wrote", got)
		}
		if again := syntax.HeaderValue(back); again != got {
			t.Errorf("ReadHeaderValue(%q) = %q, which is written %q", got, back, again)
		}
	}
}

// TestReadHeaderValue: what HeaderValue never writes is refused: a
// variable without braces, outside the allow-list, or a lone '$'.
func TestReadHeaderValue(t *testing.T) {
	for _, s := range []string{"$remote_addr", "${uri}", "${gw_host}", "$", "a${", "${}", "${remote_addr"} {
		if v, ok := syntax.ReadHeaderValue(s); ok {
			t.Errorf("ReadHeaderValue(%q) = %q, want it refused", s, v)
		}
	}
	if v, ok := syntax.ReadHeaderValue("a${gw_dollar}b${host}"); !ok || v != "a$b${host}" {
		t.Errorf(`ReadHeaderValue("a${gw_dollar}b${host}") = %q, %v`, v, ok)
	}
}

func TestValueVariables(t *testing.T) {
	vars := syntax.ValueVariables()
	for _, want := range []string{"remote_addr", "request_id", "request_method"} {
		if !syntax.ValueVariable(want) {
			t.Errorf("$%s is not allowed in header values; NGF's examples use it", want)
		}
	}
	// Never: decoded text (a line break from %0D%0A), credentials, the
	// data plane's own state, Gatewall's variables.
	for _, never := range []string{"uri", "document_uri", "remote_user", "http_authorization", "http_cookie", "cookie_session",
		"ssl_client_raw_cert", "ssl_client_cert", "server_addr", "hostname", "upstream_addr", "realpath_root", "request_body", "gw_dollar", "gw_host"} {
		if syntax.ValueVariable(never) {
			t.Errorf("$%s is allowed in header values", never)
		}
	}
	if !sort.StringsAreSorted(vars) || len(vars) == 0 {
		t.Errorf("ValueVariables() = %v", vars)
	}
}
