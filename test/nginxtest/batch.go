package nginxtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Result is what `nginx -t` said of one configuration of a batch.
type Result struct {
	// OK says NGINX accepted the configuration.
	OK bool
	// Output is NGINX's messages.
	Output string
}

// TestBatch runs `nginx -t` on each configuration, one NGINX process per
// configuration but one namespace for the whole batch: a private mount
// namespace (as Test), in which each configuration's /etc/nginx and
// /etc/app_protect are bind-mounted in turn, and a private network
// namespace, so the ports `nginx -t` binds are never the host's. A
// failure is isolated to its configuration; NGINX's standard input is
// empty, so one that reads it (OpenSSL asking for a key's passphrase) does
// not eat the list of configurations. It returns one Result per
// configuration, in order; an error means the batch itself could not run.
func TestBatch(configs [][]config.File) ([]Result, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "gatewall-nginx-batch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	var list strings.Builder
	for i, files := range configs {
		dir := filepath.Join(root, "c"+strconv.Itoa(i))
		if err := WriteRoot(dir, files); err != nil {
			return nil, err
		}
		for _, d := range []string{"etc/nginx", "etc/app_protect"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				return nil, err
			}
		}
		list.WriteString(dir + "\n")
	}
	if err := os.WriteFile(filepath.Join(root, "list"), []byte(list.String()), 0o644); err != nil {
		return nil, err
	}
	common := filepath.Join(root, "common")
	script := Isolate(common) + fmt.Sprintf(`mkdir -p /etc/app_protect
while read -r dir; do
  mount --bind "$dir/etc/nginx" /etc/nginx
  mount --bind "$dir/etc/app_protect" /etc/app_protect
  if %s -t </dev/null >"$dir.out" 2>&1; then echo 0 >"$dir.rc"; else echo 1 >"$dir.rc"; fi
  umount /etc/app_protect
  umount /etc/nginx
done <%s
`, Binary, filepath.Join(root, "list"))
	var out bytes.Buffer
	cmd := unshare(script)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("running the batch: %w: %s", err, out.String())
	}
	results := make([]Result, len(configs))
	for i := range configs {
		dir := filepath.Join(root, "c"+strconv.Itoa(i))
		rc, err := os.ReadFile(dir + ".rc")
		if err != nil {
			return nil, fmt.Errorf("configuration %d was not tested: %w", i, err)
		}
		msgs, _ := os.ReadFile(dir + ".out")
		results[i] = Result{OK: strings.TrimSpace(string(rc)) == "0", Output: string(msgs)}
	}
	return results, nil
}
