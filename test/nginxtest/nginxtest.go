// Package nginxtest runs Debian's real NGINX on rendered configuration in
// tests: `nginx -t` on files placed at their absolute data-plane paths, in a
// private mount namespace so the host's /etc/nginx is never touched.
package nginxtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Binary is the NGINX binary the tests use.
const Binary = "/usr/sbin/nginx"

// Available returns an error saying how to install NGINX when it is missing.
func Available() error {
	if _, err := os.Stat(Binary); err != nil {
		return fmt.Errorf("%s not found: run `make nginx` (hack/nginx.sh installs Debian's nginx)", Binary)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return fmt.Errorf("unshare not found (util-linux): it isolates NGINX's /etc/nginx in tests")
	}
	return nil
}

// WriteRoot writes files under root at their absolute paths.
func WriteRoot(root string, files []config.File) error {
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
			return err
		}
	}
	return nil
}

// Test runs `nginx -t` on the files. It returns NGINX's output and an error
// when the configuration is rejected.
func Test(files []config.File) (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	root, err := os.MkdirTemp("", "gatewall-nginx-t-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(root)
	if err := WriteRoot(root, files); err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-ec", Isolate(root)+"exec "+Binary+" -t")
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("nginx -t rejected the configuration: %s", strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// Isolate returns shell commands that, run in a private mount namespace,
// mount root's etc/nginx on /etc/nginx and give NGINX empty run and cache
// directories, so NGINX sees exactly the rendered files.
func Isolate(root string) string {
	return fmt.Sprintf(`mkdir -p %[1]s/etc/nginx
mount --bind %[1]s/etc/nginx /etc/nginx
mount -t tmpfs tmpfs /run
mkdir -p /run/nginx
mount -t tmpfs tmpfs /var/cache
mkdir -p /var/cache/nginx
`, root)
}
