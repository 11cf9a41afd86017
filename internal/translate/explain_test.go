package translate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestExplainDataPlaneWithoutAppProtect: when the data plane's NGINX cannot
// load the App Protect module (an image without it: what the agent reports
// of `nginx -t`, checked here with real NGINX), the refusal says which image
// WAF needs; other refusals, and Gateways without WAF, pass unchanged.
func TestExplainDataPlaneWithoutAppProtect(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	// Debian's NGINX, which the default data-plane image runs, has no such module.
	if err := os.WriteFile(conf, []byte("load_module "+policy.WAFModule+";\nevents {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nginxtest.Binary, "-t", "-q", "-e", "stderr", "-g", "pid "+filepath.Join(dir, "nginx.pid")+";", "-c", conf).CombinedOutput()
	if err == nil {
		t.Fatalf("NGINX loaded %s: this test's premise is an NGINX without App Protect", policy.WAFModule)
	}
	refused := status.DataPlane{State: status.Failed, Message: "pod default/gw-nginx-1: " + strings.TrimSpace(string(out)) + "; NGINX keeps its last good configuration"}

	in := baseInput()
	key := types.NamespacedName{Namespace: "default", Name: "gw"}
	plain := translate.Gateway(in, key)
	if got := plain.ExplainDataPlane(refused); got != refused {
		t.Errorf("a Gateway without WAF: %q", got.Message)
	}
	waf := translate.Gateway(in, key)
	waf.Policies["WAFGatewayBindingPolicy"].(*policy.WAF).Enabled = true
	got := waf.ExplainDataPlane(refused)
	if !strings.HasPrefix(got.Message, refused.Message) || !strings.Contains(got.Message, "the data-plane image has no App Protect module") ||
		!strings.Contains(got.Message, "build/dataplane-waf/Dockerfile") || !strings.Contains(got.Message, "--nginx-waf-image") {
		t.Errorf("a WAF Gateway's refusal:\n%s", got.Message)
	}
	other := status.DataPlane{State: status.Failed, Message: `pod p: [emerg] unknown directive "x"`}
	if got := waf.ExplainDataPlane(other); got != other {
		t.Errorf("another refusal: %q", got.Message)
	}
	if applied := (status.DataPlane{State: status.Applied}); waf.ExplainDataPlane(applied) != applied {
		t.Errorf("an applied configuration changed")
	}
}
