package agente2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/datafile"
)

// nginxConf is a complete nginx.conf whose http block holds servers. Its
// error log is a file, which the agent watches for reload monitoring.
func nginxConf(servers string) []byte {
	return nginxConfLog("/var/log/nginx/error.log", servers)
}

// nginxConfLog is nginxConf with another error log; the agent watches no
// error log that is stderr, and so reports a reload at once.
func nginxConfLog(errorLog, servers string) []byte {
	return []byte(`worker_processes 1;
pid /var/run/nginx/nginx.pid;
error_log ` + errorLog + ` notice;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path /var/cache/nginx/client_temp;
    proxy_temp_path /var/cache/nginx/proxy_temp;
    fastcgi_temp_path /var/cache/nginx/fastcgi_temp;
    uwsgi_temp_path /var/cache/nginx/uwsgi_temp;
    scgi_temp_path /var/cache/nginx/scgi_temp;
` + servers + `}
`)
}

// site is a server answering every request with body.
func site(ip string, port int, body string) string {
	return fmt.Sprintf(`    server {
        listen %s;
        location / { return 200 "%s\n"; }
    }
`, net.JoinHostPort(ip, strconv.Itoa(port)), body)
}

// mainConf is a configuration of a single file, /etc/nginx/nginx.conf.
func mainConf(servers string) []datafile.File {
	return []datafile.File{{Path: "/etc/nginx/nginx.conf", Data: nginxConf(servers), Mode: 0o644}}
}

// splitConf is a configuration of n files: nginx.conf including
// conf.d/<tag>-NN.conf, the first of which is a server answering tag.
func splitConf(ip string, port int, tag string, n int) []datafile.File {
	fs := mainConf("    include /etc/nginx/conf.d/*.conf;\n")
	for i := range n {
		data := fmt.Sprintf("map $uri $gatewall_%s_%d { default %d; }\n", tag, i, i)
		if i == 0 {
			data = site(ip, port, tag)
		}
		fs = append(fs, datafile.File{Path: fmt.Sprintf("/etc/nginx/conf.d/%s-%02d.conf", tag, i), Data: []byte(data)})
	}
	return fs
}

// get fetches url with a short timeout; client may be nil.
func get(client *http.Client, url string) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// waitBody waits until url answers want.
func waitBody(t testing.TB, client *http.Client, url, want string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%s to answer %q", url, want), func() (bool, string) {
		got, err := get(client, url)
		if err != nil {
			return false, err.Error()
		}
		return got == want, got
	})
}

// tlsClient trusts pool only.
func tlsClient(pool *x509.CertPool, serverName string) *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12},
	}}
}

func url(ip string, port int, scheme string) string {
	return scheme + "://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/"
}
