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
