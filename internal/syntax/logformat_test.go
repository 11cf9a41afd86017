package syntax_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestLogFormat: allow-listed variables stay variables (written ${name}),
// every other '$' becomes the literal ${gw_dollar}, and the variables
// taken as text are named, credentials among them.
func TestLogFormat(t *testing.T) {
	for _, c := range []struct {
		in, want string
		refused  []string
	}{
		{`$remote_addr - [$time_local] "$request"`, `${remote_addr} - [${time_local}] "${request}"`, nil},
		{`${status}x $statusx`, `${status}x ${gw_dollar}statusx`, []string{"statusx"}},
		{`cost: $ 5, $$, ${, $`, `cost: ${gw_dollar} 5, ${gw_dollar}${gw_dollar}, ${gw_dollar}{, ${gw_dollar}`, nil},
		{`$http_user_agent $http_x_team $arg_page $sent_http_content_type $upstream_http_x_id`,
			`${http_user_agent} ${http_x_team} ${arg_page} ${sent_http_content_type} ${upstream_http_x_id}`, nil},
		{`$http_authorization $http_cookie $cookie_session $http_proxy_authorization $sent_http_set_cookie $request_body`,
			`${gw_dollar}http_authorization ${gw_dollar}http_cookie ${gw_dollar}cookie_session ${gw_dollar}http_proxy_authorization ${gw_dollar}sent_http_set_cookie ${gw_dollar}request_body`,
			[]string{"cookie_session", "http_authorization", "http_cookie", "http_proxy_authorization", "request_body", "sent_http_set_cookie"}},
		{`$REMOTE_ADDR $HTTP_HOST $1 $gw_host`, `${gw_dollar}REMOTE_ADDR ${gw_dollar}HTTP_HOST ${gw_dollar}1 ${gw_dollar}gw_host`, []string{"1", "HTTP_HOST", "REMOTE_ADDR", "gw_host"}},
		{`$otel_trace_id $otel_span_id`, `${otel_trace_id} ${otel_span_id}`, nil},
	} {
		parts, refused, _ := syntax.LogFormat(c.in)
		if got := strings.Join(parts, ""); got != c.want {
			t.Errorf("%q: written %q, want %q", c.in, got, c.want)
		}
		if !reflect.DeepEqual(refused, c.refused) {
			t.Errorf("%q: refused %q, want %q", c.in, refused, c.refused)
		}
	}
}

// TestLogFormatInNginx: real NGINX reads every allow-listed variable in a
// log_format (it refuses a configuration naming a variable it does not
// have), and formats of every kind of text, split into strings within
// MaxToken and quoted, are read (test/balancer serves them and reads the
// lines they log).
func TestLogFormatInNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	var formats []string
	for _, v := range syntax.LogVariables() {
		if strings.HasPrefix(v, "otel_") {
			continue // defined by Gatewall's maps (nginx/config/tracing.go)
		}
		formats = append(formats, "$"+v)
	}
	formats = append(formats,
		`$http_x_team $arg_page $sent_http_content_type $upstream_http_x_id`,
		`{"a":"$remote_addr","q":"\"quoted\"","b":"back\\slash","t":"	tab","s":"; { } # $ 5"}`,
		`$$ $ ${ ${}x $1 $http_authorization é`,
		strings.Repeat(`\"$status"`, 400),
		strings.Repeat("x", 4000)+"$"+strings.Repeat("h", 300),
	)
	var b strings.Builder
	b.WriteString("geo $gw_dollar {\n    default \"$\";\n}\n")
	for i, f := range formats {
		parts, _, _ := syntax.LogFormat(f)
		var quoted []string
		for _, p := range parts {
			if err := syntax.CheckToken("part", p); err != nil {
				t.Fatalf("%q: %v", f, err)
			}
			quoted = append(quoted, syntax.Quote(p))
		}
		fmt.Fprintf(&b, "log_format f%d %s;\n", i, strings.Join(quoted, " "))
	}
	b.WriteString("server {\n    listen 127.0.0.1:8080;\n    access_log /dev/stdout f0;\n}\n")
	if out, err := nginxtest.Test(minimal(b.String())); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestLogVariablesSorted: the list docs/validation.md prints is sorted
// and holds no credential.
func TestLogVariablesSorted(t *testing.T) {
	vs := syntax.LogVariables()
	if !sort.StringsAreSorted(vs) {
		t.Error("not sorted")
	}
	for _, v := range vs {
		if strings.Contains(v, "authorization") || strings.Contains(v, "cookie") || v == "request_body" {
			t.Errorf("%s carries credentials", v)
		}
	}
}
