// Package s3test runs a real S3-compatible server (versitygw, built by
// hack/versitygw.sh) on a loopback port for tests that play PLM's bundle
// storage, and starts test servers as process groups killed at test end.
package s3test

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
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// repoRoot is the repository's root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// freePort reserves a loopback port. Another process could take it before the
// server binds it; on a test machine that is rare enough.
func FreePort(t TB) int {
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
type Process struct {
	t    TB
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func StartProcess(t TB, name, logFile string, env []string, bin string, args ...string) *Process {
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
	p := &Process{t: t, name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

func (p *Process) Stop() {
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
func (p *Process) WaitListening(addr string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.t.Fatalf("%s exited at start:\n%s", p.name, Tail(p.log))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond) // readiness poll, not an assertion
	}
	p.t.Fatalf("%s not listening on %s after 20s:\n%s", p.name, addr, Tail(p.log))
}

func Tail(file string) string {
	b, _ := os.ReadFile(file)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Server is a real S3-compatible server (versitygw, posix backend) on a
// loopback port that survives restarts with other keys or certificates.
type Server struct {
	t              TB
	bin            string
	dir, data      string
	port           int
	access, secret string
	cert           *TLSFiles // nil: plain HTTP
	proc           *Process
	restarts       int
}

// TLSFiles are a certificate and key file.
type TLSFiles struct{ Cert, Key string }

func binary(t TB) string {
	bin := filepath.Join(RepoRoot(), "bin", "versitygw")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("versitygw not found at %s: build it with hack/versitygw.sh (%v)", bin, err)
	}
	return bin
}

// Start starts versitygw with root keys access/secret (and TLS when cert
// is set); it stops when the test ends.
func Start(t TB, access, secret string, cert *TLSFiles) *Server {
	t.Helper()
	v := &Server{t: t, bin: binary(t), dir: t.TempDir(), port: FreePort(t), access: access, secret: secret, cert: cert}
	v.data = filepath.Join(v.dir, "data")
	if err := os.Mkdir(v.data, 0o700); err != nil {
		t.Fatal(err)
	}
	v.start()
	return v
}

func (v *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", v.port) }

// URL is the server's endpoint.
func (v *Server) URL() string {
	if v.cert != nil {
		return "https://" + v.Addr()
	}
	return "http://" + v.Addr()
}

func (v *Server) AccessLog() string { return filepath.Join(v.dir, "access.log") }

func (v *Server) start() {
	v.t.Helper()
	args := []string{"--port", v.Addr(), "--access-log", v.AccessLog(), "--quiet"}
	if v.cert != nil {
		args = append(args, "--cert", v.cert.Cert, "--key", v.cert.Key)
	}
	args = append(args, "posix", v.data)
	env := []string{"ROOT_ACCESS_KEY=" + v.access, "ROOT_SECRET_KEY=" + v.secret}
	v.restarts++
	v.proc = StartProcess(v.t, "versitygw", filepath.Join(v.dir, fmt.Sprintf("versitygw-%d.log", v.restarts)), env, v.bin, args...)
	v.proc.WaitListening(v.Addr())
}

// Resume starts a stopped server again with the same keys, certificate,
// port and data.
func (v *Server) Resume() {
	v.t.Helper()
	v.start()
}

// Stop stops the server.
func (v *Server) Stop() { v.proc.Stop() }

// restart stops the server and starts it with new keys and/or certificate on
// the same port and data.
func (v *Server) Restart(access, secret string, cert *TLSFiles) {
	v.t.Helper()
	v.Stop()
	v.access, v.secret, v.cert = access, secret, cert
	v.start()
}

// getObjectRequests counts GetObject requests for key in the access log:
// the server's own count of network fetches.
func (v *Server) GetObjectRequests(key string) int {
	b, err := os.ReadFile(v.AccessLog())
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
func (v *Server) AdminClient(caPEM []byte) *s3.Client {
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

// Put stores an object, creating its bucket if needed; a failure fails
// the test that started the server.
func (v *Server) Put(caPEM []byte, bucket, key string, data []byte) {
	v.t.Helper()
	if err := v.PutObject(caPEM, bucket, key, data); err != nil {
		v.t.Fatalf("%v", err)
	}
}

// PutObject stores an object, creating its bucket if needed.
func (v *Server) PutObject(caPEM []byte, bucket, key string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := v.AdminClient(caPEM)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned interface{ ErrorCode() string }
	if err != nil && !(errors.As(err, &owned) && strings.HasPrefix(owned.ErrorCode(), "BucketAlready")) {
		return fmt.Errorf("creating bucket %s: %w", bucket, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
		return fmt.Errorf("putting s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}
