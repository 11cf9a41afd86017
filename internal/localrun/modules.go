package localrun

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleDir is the directory of a Go module the repository requires (in
// the module cache): the Gateway API's CRDs and conformance manifests are
// read from there.
func ModuleDir(module string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("locating %s (go list -m): %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// withExperimentalHTTPRoute fills dir with the standard CRDs of standard (a
// GatewayAPICRDDir), the HTTPRoute CRD taken from the experimental channel
// beside it, and returns dir.
func withExperimentalHTTPRoute(standard, dir string) (string, error) {
	const httpRoutes = "gateway.networking.k8s.io_httproutes.yaml"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(standard)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		src := filepath.Join(standard, e.Name())
		if e.Name() == httpRoutes {
			src = filepath.Join(filepath.Dir(standard), "experimental", httpRoutes)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// GatewayAPICRDDir is the directory of the Gateway API's standard CRDs.
func GatewayAPICRDDir() (string, error) {
	dir, err := ModuleDir("sigs.k8s.io/gateway-api")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return dir, nil
}
