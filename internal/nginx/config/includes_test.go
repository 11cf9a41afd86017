package config

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/graph"
)

// TestIncludeFiles: an include file is the header comment, then each
// directive on its line; a block is written open and closed, its
// directives indented; no directives, no file.
func TestIncludeFiles(t *testing.T) {
	var inc Includes
	inc.AddHTTP(IncludesDir+"none.conf", nil)
	inc.AddHTTP(IncludesDir+"a.conf", []Directive{
		D("client_max_body_size", "10m"),
		D("keepalive_timeout", "60s", "30s"),
		D("app_protect_policy_file", Quote("/etc/app_protect/bundles/x.tgz")),
	})
	r := graph.ObjectRef{Kind: graph.KindHTTPRoute, Key: types.NamespacedName{Namespace: "default", Name: "r"}}
	inc.AddRoute(r, IncludesDir+"a/r.conf", nil)
	inc.AddRoute(r, IncludesDir+"a/r.conf", []Directive{
		D("limit_req", "zone=z", "burst=5", "nodelay"),
		{Name: "if", Args: []string{"($x)"}, Block: []Directive{D("return", "204")}},
	})
	if len(inc.HTTP) != 1 || len(inc.Routes[r]) != 1 {
		t.Fatalf("files: http %d, route %d; want 1 each (none for no directives)", len(inc.HTTP), len(inc.Routes[r]))
	}
	for _, c := range []struct {
		f    File
		want string
	}{
		{inc.HTTP[0], "# " + header + "\nclient_max_body_size 10m;\nkeepalive_timeout 60s 30s;\napp_protect_policy_file \"/etc/app_protect/bundles/x.tgz\";\n"},
		{inc.Routes[r][0], "# " + header + "\nlimit_req zone=z burst=5 nodelay;\nif ($x) {\n    return 204;\n}\n"},
	} {
		if string(c.f.Data) != c.want || c.f.Mode != 0o644 {
			t.Errorf("%s (mode %o):\n%s\nwant (mode 644):\n%s", c.f.Path, c.f.Mode, c.f.Data, c.want)
		}
	}
}
