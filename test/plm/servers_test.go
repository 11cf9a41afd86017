package plm_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// repoRoot is the repository's root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// freePort reserves a loopback port. Another process could take it before the
// server binds it; on a test machine that is rare enough.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a server started in its own process group, killed with the
// group when stopped or when the test ends; Pdeathsig also kills it if the
// test binary dies.
type process struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startProcess(t testing.TB, name, logFile string, env []string, bin string, args ...string) *process {
	t.Helper()
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{t: t, name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// waitListening waits until addr accepts connections or the process exits.
func (p *process) waitListening(addr string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.t.Fatalf("%s exited at start:\n%s", p.name, tail(p.log))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond) // readiness poll, not an assertion
	}
	p.t.Fatalf("%s not listening on %s after 20s:\n%s", p.name, addr, tail(p.log))
}

func tail(file string) string {
	b, _ := os.ReadFile(file)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// versity is a real S3-compatible server (versitygw, posix backend) on a
// loopback port that survives restarts with other keys or certificates.
type versity struct {
	t              testing.TB
	bin            string
	dir, data      string
	port           int
	access, secret string
	cert           *tlsFiles // nil: plain HTTP
	proc           *process
	restarts       int
}

type tlsFiles struct{ cert, key string }

func versityBinary(t testing.TB) string {
	bin := filepath.Join(repoRoot(), "bin", "versitygw")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("versitygw not found at %s: build it with hack/versitygw.sh (%v)", bin, err)
	}
	return bin
}

func startVersity(t testing.TB, access, secret string, cert *tlsFiles) *versity {
	t.Helper()
	v := &versity{t: t, bin: versityBinary(t), dir: t.TempDir(), port: freePort(t), access: access, secret: secret, cert: cert}
	v.data = filepath.Join(v.dir, "data")
	if err := os.Mkdir(v.data, 0o700); err != nil {
		t.Fatal(err)
	}
	v.start()
	return v
}

func (v *versity) addr() string { return fmt.Sprintf("127.0.0.1:%d", v.port) }

func (v *versity) URL() string {
	if v.cert != nil {
		return "https://" + v.addr()
	}
	return "http://" + v.addr()
}

func (v *versity) accessLog() string { return filepath.Join(v.dir, "access.log") }

func (v *versity) start() {
	v.t.Helper()
	args := []string{"--port", v.addr(), "--access-log", v.accessLog(), "--quiet"}
	if v.cert != nil {
		args = append(args, "--cert", v.cert.cert, "--key", v.cert.key)
	}
	args = append(args, "posix", v.data)
	env := []string{"ROOT_ACCESS_KEY=" + v.access, "ROOT_SECRET_KEY=" + v.secret}
	v.restarts++
	v.proc = startProcess(v.t, "versitygw", filepath.Join(v.dir, fmt.Sprintf("versitygw-%d.log", v.restarts)), env, v.bin, args...)
	v.proc.waitListening(v.addr())
}

func (v *versity) stop() { v.proc.stop() }

// restart stops the server and starts it with new keys and/or certificate on
// the same port and data.
func (v *versity) restart(access, secret string, cert *tlsFiles) {
	v.t.Helper()
	v.stop()
	v.access, v.secret, v.cert = access, secret, cert
	v.start()
}

// getObjectRequests counts GetObject requests for key in the access log:
// the server's own count of network fetches.
func (v *versity) getObjectRequests(key string) int {
	b, err := os.ReadFile(v.accessLog())
	if err != nil {
		v.t.Fatalf("reading access log: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "s3_GetObject") && strings.Contains(line, " "+key+" ") {
			n++
		}
	}
	return n
}

// adminClient is the test's own S3 client, used to create buckets and
// objects the way PLM would.
func (v *versity) adminClient(caPEM []byte) *s3.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caPEM != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	url := v.URL()
	return s3.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(v.access, v.secret, ""),
		HTTPClient:  &http.Client{Transport: tr},
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(url)
		o.UsePathStyle = true
	})
}

func (v *versity) put(caPEM []byte, bucket, key string, data []byte) {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := v.adminClient(caPEM)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned interface{ ErrorCode() string }
	if err != nil && !(errors.As(err, &owned) && strings.HasPrefix(owned.ErrorCode(), "BucketAlready")) {
		v.t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
		v.t.Fatalf("putting s3://%s/%s: %v", bucket, key, err)
	}
}

// nginxMTLS is Debian's NGINX terminating TLS in front of versitygw and
// requiring a client certificate signed by clientCA: versitygw itself
// cannot require client certificates.
type nginxMTLS struct {
	t    testing.TB
	dir  string
	port int
	proc *process
}

const nginxBin = "/usr/sbin/nginx"

func startNginxMTLS(t testing.TB, upstream string, server tlsFiles, clientCAFile string) *nginxMTLS {
	t.Helper()
	if _, err := os.Stat(nginxBin); err != nil {
		t.Fatalf("%s not found: install Debian's nginx (make nginx / hack/nginx.sh): %v", nginxBin, err)
	}
	n := &nginxMTLS{t: t, dir: t.TempDir(), port: freePort(t)}
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
`, user, n.dir, n.port, server.cert, server.key, clientCAFile, upstream)
	confFile := filepath.Join(n.dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	n.proc = startProcess(t, "nginx", filepath.Join(n.dir, "stderr.log"), nil,
		nginxBin, "-p", n.dir, "-c", confFile, "-e", filepath.Join(n.dir, "error.log"))
	n.proc.waitListening(n.addr())
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
