// Package nginxtest runs Debian's real NGINX on rendered configuration in
// tests: `nginx -t` on files placed at their absolute data-plane paths, in
// private mount and network namespaces so the host's /etc/nginx and ports
// are never touched. Root is not needed for `nginx -t`: without it the
// namespaces belong to a user namespace of the caller's own (see
// Namespaces). Serving traffic (Serve) needs root.
package nginxtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// Namespaces are unshare(1)'s flags for NGINX's private mount and network
// namespaces. As root they are new namespaces of the host's user
// namespace. Otherwise they belong to a new user namespace that maps the
// caller to itself and keeps the capabilities it grants (--keep-caps), so
// the shell can mount; NGINX, whose user is not root there, stays that
// user (it has no worker user to chown its temporary directories to,
// which an unprivileged user namespace could not map).
func Namespaces() []string {
	ns := []string{"--mount", "--net", "--propagation", "private"}
	if os.Geteuid() == 0 {
		return ns
	}
	return append([]string{"--user", "--map-current-user", "--keep-caps"}, ns...)
}

// unshare is the command running the shell script in NGINX's namespaces.
func unshare(script string) *exec.Cmd {
	return exec.Command("unshare", append(Namespaces(), "sh", "-ec", script)...)
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

// ServerConf is a minimal nginx.conf (at its data-plane path) with one
// HTTP server holding directives: for tests of what NGINX makes of a few
// directives and the files they name, outside Gatewall's rendering.
func ServerConf(directives string) config.File {
	return HTTPConf("    server {\n" + directives + "\n    }\n")
}

// HTTPConf is a minimal nginx.conf (at its data-plane path) whose http
// context holds body (servers, maps), as ServerConf.
func HTTPConf(body string) config.File {
	return config.File{Path: config.MainConfPath, Mode: 0o644, Data: []byte(`pid /var/run/nginx/nginx.pid;
error_log stderr;
events {}
http {
    access_log off;
    client_body_temp_path /var/cache/nginx/client_body_temp;
    proxy_temp_path /var/cache/nginx/proxy_temp;
    fastcgi_temp_path /var/cache/nginx/fastcgi_temp;
    uwsgi_temp_path /var/cache/nginx/uwsgi_temp;
    scgi_temp_path /var/cache/nginx/scgi_temp;
` + body + `}
`)}
}

// Test runs `nginx -t` on the files. It returns NGINX's output and an error
// when the configuration is rejected. `nginx -t` binds the ports it
// listens on, so it runs in a network namespace of its own: the host's
// ports are never touched, and a port in use on the host fails nothing.
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
	cmd := unshare(Isolate(root) + "exec " + Binary + " -t")
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("nginx -t rejected the configuration: %s", strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// Warnings returns the lines of NGINX's output that are warnings or worse
// (a configuration Gatewall renders must make NGINX log nothing of the
// kind: a warning is repeated on every test and reload).
func Warnings(out string) []string {
	var ws []string
	for _, line := range strings.Split(out, "\n") {
		for _, level := range []string{"[warn]", "[error]", "[crit]", "[alert]", "[emerg]"} {
			if strings.Contains(line, level) {
				ws = append(ws, line)
				break
			}
		}
	}
	return ws
}

// APStubModule is the App Protect test double (hack/apstub.sh builds it).
var APStubModule = filepath.Join(repoRoot(), "bin", "ngx_http_app_protect_module.so")

// Isolate returns shell commands that, run in a private mount namespace,
// make NGINX see exactly the rendered files: root's etc overlays /etc (so
// /etc/app_protect/bundles exists only in the namespace) with root's
// etc/nginx mounted exactly on /etc/nginx, NGINX's modules directory holds
// the App Protect test double, and the run and cache directories are empty.
// The host's files are never changed.
func Isolate(root string) string {
	return fmt.Sprintf(`mkdir -p %[1]s/etc/nginx %[1]s/.work/etc %[1]s/.work/usrlib %[1]s/.usrlib/nginx/modules
if [ -f %[2]s ]; then cp %[2]s %[1]s/.usrlib/nginx/modules/; fi
mount -t overlay overlay -o lowerdir=/etc,upperdir=%[1]s/etc,workdir=%[1]s/.work/etc /etc
mount --bind %[1]s/etc/nginx /etc/nginx
mount -t overlay overlay -o lowerdir=/usr/lib,upperdir=%[1]s/.usrlib,workdir=%[1]s/.work/usrlib /usr/lib
mount -t tmpfs tmpfs /run
mkdir -p /run/nginx
mount -t tmpfs tmpfs /var/cache
mkdir -p /var/cache/nginx
mkdir -p %[1]s/.log
mount --bind %[1]s/.log /var/log
mkdir -p /var/log/nginx /var/log/app_protect
`, root, APStubModule)
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}
