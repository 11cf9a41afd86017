package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/render"
)

// scopeManifests: two Gateways, each protected by a policy on its own
// APPolicy; PLM reports one bundle inside the storage folder the manager
// may fetch from and one outside it (another bucket, as anyone who can
// write an APPolicy's status could make it).
const scopeManifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec:
  controllerName: gateway.nginx.org/nginx-gateway-controller
  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: waf-on, namespace: default}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: waf-on, namespace: default}
spec: {waf: enabled}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: inside, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: outside, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFGatewayBindingPolicy
metadata: {name: inside, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: inside}]
  apPolicySource: {name: inside}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFGatewayBindingPolicy
metadata: {name: outside, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: outside}]
  apPolicySource: {name: outside}
---
apiVersion: appprotect.f5.com/v1
kind: APPolicy
metadata: {name: inside, namespace: default}
spec: {}
status:
  bundle: {state: ready, location: "s3://plm/bundles/inside.tgz", sha256: "b60644e85e97a66ac43fe0ea8125b9000d8e565d8bd6f2680b7e8697aeea1aa5"}
---
apiVersion: appprotect.f5.com/v1
kind: APPolicy
metadata: {name: outside, namespace: default}
spec: {}
status:
  bundle: {state: ready, location: "s3://backups/db-dump.tgz", sha256: "b60644e85e97a66ac43fe0ea8125b9000d8e565d8bd6f2680b7e8697aeea1aa5"}
`

// TestRunRefusesBundlesOutsideTheStorageScope: with the manager's
// --plm-storage-bucket and --plm-storage-prefix, a bundle PLM reports
// elsewhere is refused in the policy's status (ResolvedRefs InvalidRef)
// and nothing of it is rendered; the bundle inside is used.
func TestRunRefusesBundlesOutsideTheStorageScope(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(in, []byte(scopeManifests), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	err := render.Run(render.Options{
		Paths: []string{in}, OutputDir: out, ControllerName: graph.DefaultControllerName,
		BundlesDir: "testdata/waf-held.bundles", PLMScope: plm.Scope{Bucket: "plm", Prefix: "bundles"},
	})
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(filepath.Join(out, render.StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	// YAML folds long messages: compare with runs of spaces as one.
	if !strings.Contains(strings.Join(strings.Fields(string(status)), " "),
		`"s3://backups/db-dump.tgz": the location is outside the PLM storage Gatewall may fetch from (bucket "plm", keys under "bundles/")`) {
		t.Errorf("no policy status refuses the location outside the bucket:\n%s", status)
	}
	waf := func(gw string) string {
		data, _ := os.ReadFile(filepath.Join(out, "default_"+gw, "etc", "nginx", "includes", "waf.conf"))
		return string(data)
	}
	if !strings.Contains(waf("inside"), "app_protect_enable on;") {
		t.Errorf("the bundle inside the scope is not rendered:\n%s", waf("inside"))
	}
	if strings.Contains(waf("outside"), "app_protect_enable on;") {
		t.Errorf("the bundle outside the scope is rendered:\n%s", waf("outside"))
	}
}

// TestRunSaysWhichGatewaysAreHeld: render writes no files for a Gateway
// whose configuration the manager would hold back, and says so on its
// warnings with why.
func TestRunSaysWhichGatewaysAreHeld(t *testing.T) {
	out := t.TempDir()
	var warnings bytes.Buffer
	err := render.Run(render.Options{
		Paths: []string{"testdata/waf-held.in.yaml"}, OutputDir: out, ControllerName: graph.DefaultControllerName,
		BundlesDir: "testdata/waf-held.bundles", Warnings: &warnings,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warnings.String(), "Gateway default/restarted: no files written: Gatewall holds this Gateway's configuration back") {
		t.Errorf("warnings do not name the held Gateway:\n%s", warnings.String())
	}
	if _, err := os.Stat(filepath.Join(out, "default_restarted")); !os.IsNotExist(err) {
		t.Errorf("files were written for the held Gateway (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(out, "default_plain", "etc", "nginx", "nginx.conf")); err != nil {
		t.Errorf("the Gateway without WAF was not written: %v", err)
	}
}
