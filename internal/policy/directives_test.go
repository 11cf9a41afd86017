package policy

import (
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// lines writes directives as the include files hold them, "name args;"
// each (a block on one line: "name args { ... }"), for readable assertions
// and for the configurations the tests give `nginx -t`.
func lines(ds []config.Directive) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		s := strings.Join(append([]string{d.Name}, d.Args...), " ")
		if d.Block != nil {
			s += " { " + strings.Join(lines(d.Block), " ") + " }"
		} else {
			s += ";"
		}
		out = append(out, s)
	}
	return out
}
