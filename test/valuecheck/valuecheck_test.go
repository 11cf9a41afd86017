package valuecheck_test

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/test/valuecheck"
)

func TestExpand(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"$remote_addr", "<remote_addr>"},
		{"${request_id}x", "<request_id>x"},
		{"$remote_addrx", "$remote_addrx"},
		{"$$host", "$<host>"},
		{"${foo}$", "${foo}$"},
		{"${remote_addr", "${remote_addr"},
		{`a"\;{}`, `a"\;{}`},
	}
	for _, c := range cases {
		got := valuecheck.Expand(c.in, func(s string) string { return s }, func(n string) string { return "<" + n + ">" })
		if got != c.want {
			t.Errorf("Expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInterpolate(t *testing.T) {
	vars := func(n string) (string, bool) {
		switch n {
		case "gw_dollar":
			return "$", true
		case "remote_addr":
			return "1.2.3.4", true
		}
		return "", false
	}
	for in, want := range map[string]string{"a${gw_dollar}b": "a$b", "$remote_addr:${remote_addr}x": "1.2.3.4:1.2.3.4x", `"{}`: `"{}`} {
		if got, err := valuecheck.Interpolate(in, vars); err != nil || got != want {
			t.Errorf("Interpolate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"a$": "starts no variable", "${remote_addr": "closing bracket", "$uri": "reads $uri", "$remote_addrx": "reads $remote_addrx"} {
		if _, err := valuecheck.Interpolate(in, vars); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Interpolate(%q): %v, want an error containing %q", in, err, want)
		}
	}
}
