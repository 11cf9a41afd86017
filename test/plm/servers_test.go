package plm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatewall/gatewall/test/s3test"
)

// nginxMTLS is Debian's NGINX terminating TLS in front of versitygw and
// requiring a client certificate signed by clientCA: versitygw itself
// cannot require client certificates.
type nginxMTLS struct {
	t    testing.TB
	dir  string
	port int
	proc *s3test.Process
}

const nginxBin = "/usr/sbin/nginx"

func startNginxMTLS(t testing.TB, upstream string, server s3test.TLSFiles, clientCAFile string) *nginxMTLS {
	t.Helper()
	if _, err := os.Stat(nginxBin); err != nil {
		t.Fatalf("%s not found: install Debian's nginx (make nginx / hack/nginx.sh): %v", nginxBin, err)
	}
	n := &nginxMTLS{t: t, dir: t.TempDir(), port: s3test.FreePort(t)}
	for _, d := range []string{"body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		if err := os.Mkdir(filepath.Join(n.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	user := ""
	if os.Geteuid() == 0 {
		// Run as root, NGINX drops its workers to "nobody", who cannot use
		// the temp paths inside the test's 0700 directory.
		user = "user root root;"
	}
	conf := fmt.Sprintf(`%[1]s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log info;
events { worker_connections 256; }
http {
    access_log %[2]s/access.log;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    server {
        listen 127.0.0.1:%[3]d ssl;
        ssl_certificate %[4]s;
        ssl_certificate_key %[5]s;
        ssl_client_certificate %[6]s;
        ssl_verify_client on;
        ssl_protocols TLSv1.2 TLSv1.3;
        client_max_body_size 0;
        location / {
            # SigV4 signs the Host header: pass the client's unchanged.
            proxy_set_header Host $http_host;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_pass http://%[7]s;
        }
    }
}
`, user, n.dir, n.port, server.Cert, server.Key, clientCAFile, upstream)
	confFile := filepath.Join(n.dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	n.proc = s3test.StartProcess(t, "nginx", filepath.Join(n.dir, "stderr.log"), nil,
		nginxBin, "-p", n.dir, "-c", confFile, "-e", filepath.Join(n.dir, "error.log"))
	n.proc.WaitListening(n.addr())
	return n
}

func (n *nginxMTLS) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }
func (n *nginxMTLS) URL() string  { return "https://" + n.addr() }

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
