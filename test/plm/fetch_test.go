// Package plm_test runs internal/plm's Fetcher against a real S3-compatible
// server (versitygw, built by hack/versitygw.sh), over HTTP, HTTPS and mutual
// TLS (Debian's NGINX terminating TLS in front of versitygw).
package plm_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

const (
	adminSecret = "admin-secret-1"
	bucket      = "plm-bundles"
)

func credentialsSecret(secret string) *corev1.Secret {
	s := &corev1.Secret{Data: map[string][]byte{plm.CredentialsSecretKey: []byte(secret)}}
	s.Namespace, s.Name = "gatewall-system", "plm-storage-credentials"
	return s
}

// setCredentials goes through the same helper as the Secret reconciler.
func setCredentials(t *testing.T, f *fetcher, secret string) {
	t.Helper()
	id, key, err := plm.CredentialsFromSecret(credentialsSecret(secret))
	if err != nil {
		t.Fatal(err)
	}
	f.SetCredentials(id, key)
}

func setTLS(t *testing.T, f *fetcher, caPEM []byte, client *[2][]byte) {
	t.Helper()
	var ca, cl *corev1.Secret
	if caPEM != nil {
		ca = &corev1.Secret{Data: map[string][]byte{plm.CASecretKey: caPEM}}
	}
	if client != nil {
		cl = &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: client[0], corev1.TLSPrivateKeyKey: client[1]}}
	}
	settings, err := plm.TLSFromSecrets(ca, cl, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetTLS(settings); err != nil {
		t.Fatal(err)
	}
}

func ref(key, sha string) plm.BundleRef {
	return plm.BundleRef{Location: fmt.Sprintf("s3://%s/%s", bucket, key), Sha256: sha}
}

func assertCached(t *testing.T, r plm.Result, want []byte) {
	t.Helper()
	got, err := os.ReadFile(r.Path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("cache file %s: %d bytes, %v; want the %d-byte bundle", r.Path, len(got), err, len(want))
	}
}

func TestHTTP(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	data, sha := randomBundle(t, 64<<10)
	srv.Put(nil, bucket, "ns/policy.tgz", data)

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	f.run()
	f.Want([]plm.BundleRef{ref("ns/policy.tgz", sha)})
	r := f.waitState(sha, plm.Fetched)
	assertCached(t, r, data)
	if n := srv.GetObjectRequests("ns/policy.tgz"); n != 1 {
		t.Errorf("server saw %d GetObject requests; want 1", n)
	}
}

func TestWrongCredentialsThenRotation(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	v1, sha1 := randomBundle(t, 4<<10)
	v2, sha2 := randomBundle(t, 4<<10)
	srv.Put(nil, bucket, "v1.tgz", v1)
	srv.Put(nil, bucket, "v2.tgz", v2)

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	f.run()
	f.Want([]plm.BundleRef{ref("v1.tgz", sha1)})
	r := f.waitState(sha1, plm.Failed) // no credentials yet: anonymous
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "403 Forbidden") {
		t.Fatalf("anonymous: %+v; want FetchError 403", r)
	}
	t.Logf("anonymous: %s", r.Message)

	setCredentials(t, f, "not-the-secret") // a change: retried at once
	r = f.waitAttempts(sha1, 2)
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "403 Forbidden") ||
		!strings.Contains(r.Message, "s3://"+bucket+"/v1.tgz") || !strings.Contains(r.Message, "--plm-storage-credentials-secret") {
		t.Fatalf("wrong credentials: %+v; want FetchError 403 naming the location and the Secret flag", r)
	}
	t.Logf("wrong credentials: %s", r.Message)

	setCredentials(t, f, adminSecret)
	assertCached(t, f.waitState(sha1, plm.Fetched), v1)

	// The storage admin rotates the secret; the Secret follows.
	srv.Restart("admin", "admin-secret-2", nil)
	f.Want([]plm.BundleRef{ref("v2.tgz", sha2)})
	r = f.waitState(sha2, plm.Failed)
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "403") {
		t.Fatalf("after server rotation: %+v; want 403", r)
	}
	if old := f.Result(sha1); old.State != plm.Fetched {
		t.Errorf("old bundle after a failed update: %+v; want still Fetched", old)
	}
	setCredentials(t, f, "admin-secret-2\n")
	assertCached(t, f.waitState(sha2, plm.Fetched), v2)
}

func TestHTTPSWithCAAndCARotation(t *testing.T) {
	dir := t.TempDir()
	ca1, ca2 := newCA(t, "storage-ca-1"), newCA(t, "storage-ca-2")
	srv := s3test.Start(t, "admin", adminSecret, ptr(serverFiles(t, ca1, dir, "server1")))
	v1, sha1 := randomBundle(t, 4<<10)
	v2, sha2 := randomBundle(t, 4<<10)
	srv.Put(ca1.CertPEM(), bucket, "v1.tgz", v1)
	srv.Put(ca1.CertPEM(), bucket, "v2.tgz", v2)

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	setTLS(t, f, ca1.CertPEM(), nil)
	f.run()
	f.Want([]plm.BundleRef{ref("v1.tgz", sha1)})
	assertCached(t, f.waitState(sha1, plm.Fetched), v1)

	// The server's certificate is re-issued by a new CA.
	srv.Restart("admin", adminSecret, ptr(serverFiles(t, ca2, dir, "server2")))
	f.Want([]plm.BundleRef{ref("v2.tgz", sha2)})
	r := f.waitState(sha2, plm.Failed)
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "server certificate not trusted") ||
		!strings.Contains(r.Message, "--plm-storage-ca-secret") {
		t.Fatalf("old CA against the new certificate: %+v", r)
	}
	t.Logf("old CA: %s", r.Message)
	setTLS(t, f, ca2.CertPEM(), nil)
	assertCached(t, f.waitState(sha2, plm.Fetched), v2)
}

func TestWrongCA(t *testing.T) {
	dir := t.TempDir()
	ca, wrong := newCA(t, "storage-ca"), newCA(t, "someone-else")
	srv := s3test.Start(t, "admin", adminSecret, ptr(serverFiles(t, ca, dir, "server")))
	data, sha := randomBundle(t, 4<<10)
	srv.Put(ca.CertPEM(), bucket, "p.tgz", data)

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	setTLS(t, f, wrong.CertPEM(), nil)
	f.run()
	f.Want([]plm.BundleRef{ref("p.tgz", sha)})
	r := f.waitState(sha, plm.Failed)
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "certificate signed by unknown authority") ||
		!strings.Contains(r.Message, "fetching s3://"+bucket+"/p.tgz") {
		t.Fatalf("wrong CA: %+v; want a FetchError naming the unknown authority", r)
	}
	t.Logf("wrong CA: %s", r.Message)
	if n := srv.GetObjectRequests("p.tgz"); n != 0 {
		t.Errorf("server saw %d GetObject requests through an untrusted connection", n)
	}

	// Plain HTTP against the TLS port is a clear error too.
	f2 := newFetcher(t, strings.Replace(srv.URL(), "https://", "http://", 1), t.TempDir(), nil)
	f2.run()
	f2.Want([]plm.BundleRef{ref("p.tgz", sha)})
	r = f2.waitState(sha, plm.Failed)
	t.Logf("http:// to a TLS port: %s", r.Message)
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, rogueCA := newCA(t, "storage-ca"), newCA(t, "client-ca"), newCA(t, "rogue-ca")
	backend := s3test.Start(t, "admin", adminSecret, nil)
	data, sha := randomBundle(t, 64<<10)
	backend.Put(nil, bucket, "mtls.tgz", data)
	proxy := startNginxMTLS(t, backend.Addr(), serverFiles(t, serverCA, dir, "server"), writeFile(t, dir, "client-ca.crt", clientCA.CertPEM()))

	f := newFetcher(t, proxy.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	setTLS(t, f, serverCA.CertPEM(), nil) // no client certificate yet
	f.run()
	f.Want([]plm.BundleRef{ref("mtls.tgz", sha)})
	r := f.waitState(sha, plm.Failed)
	if r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "400 Bad Request") ||
		!strings.Contains(r.Message, "--plm-storage-client-ssl-secret") {
		t.Fatalf("no client certificate: %+v", r)
	}
	t.Logf("no client certificate: %s", r.Message)

	rogue := clientPair(t, rogueCA)
	setTLS(t, f, serverCA.CertPEM(), &[2][]byte{rogue.CertPEM, rogue.KeyPEM})
	r = f.waitAttempts(sha, 2)
	if r.State != plm.Failed || r.Reason != plm.ReasonFetchError {
		t.Fatalf("client certificate from another CA: %+v", r)
	}
	t.Logf("client certificate from another CA: %s", r.Message)

	good := clientPair(t, clientCA)
	setTLS(t, f, serverCA.CertPEM(), &[2][]byte{good.CertPEM, good.KeyPEM})
	r = f.waitState(sha, plm.Fetched)
	assertCached(t, r, data)
	if n := backend.GetObjectRequests("mtls.tgz"); n != 1 {
		t.Errorf("backend saw %d GetObject requests; want 1 (only the authenticated one)", n)
	}
}

func TestChecksumMismatchNotRetried(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	tampered, _ := randomBundle(t, 4<<10)
	_, compiledSha := randomBundle(t, 4<<10) // PLM reports another content's sha
	sentinel, sentinelSha := randomBundle(t, 1<<10)
	srv.Put(nil, bucket, "tampered.tgz", tampered)
	srv.Put(nil, bucket, "sentinel.tgz", sentinel)

	clk := clocktesting.NewFakeClock(time.Now())
	f := newFetcher(t, srv.URL(), t.TempDir(), func(o *plm.Options) { o.Clock = clk })
	setCredentials(t, f, adminSecret)
	f.run()
	bad := ref("tampered.tgz", compiledSha)
	f.Want([]plm.BundleRef{bad})
	r := f.waitState(compiledSha, plm.Failed)
	if r.Reason != plm.ReasonIntegrityError || !r.RetryAt.IsZero() || !strings.Contains(r.Message, "sha256 mismatch") {
		t.Fatalf("mismatch: %+v; want IntegrityError without retry", r)
	}
	t.Logf("mismatch: %s", r.Message)

	clk.Step(time.Hour)
	f.Want([]plm.BundleRef{bad, ref("sentinel.tgz", sentinelSha)})
	f.waitState(sentinelSha, plm.Fetched)
	if n := srv.GetObjectRequests("tampered.tgz"); n != 1 {
		t.Errorf("server saw %d GetObject requests for the tampered object; want 1", n)
	}
	if a := f.Stats().Attempts[compiledSha]; a != 1 {
		t.Errorf("attempts = %d; want 1", a)
	}
}

func TestServerDownThenBack(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	data, sha := randomBundle(t, 16<<10)
	srv.Put(nil, bucket, "p.tgz", data)
	srv.Stop()

	clk := clocktesting.NewFakeClock(time.Now())
	f := newFetcher(t, srv.URL(), t.TempDir(), func(o *plm.Options) {
		o.Clock = clk
		o.MinBackoff, o.MaxBackoff = time.Second, time.Minute
	})
	setCredentials(t, f, adminSecret)
	f.run()
	f.Want([]plm.BundleRef{ref("p.tgz", sha)})

	var delays []time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		r := f.waitAttempts(sha, attempt)
		if r.State != plm.Failed || r.Reason != plm.ReasonFetchError || !strings.Contains(r.Message, "connection refused") {
			t.Fatalf("attempt %d with the server down: %+v", attempt, r)
		}
		delays = append(delays, r.RetryAt.Sub(clk.Now()))
		if attempt == 3 {
			srv.Resume()
		}
		clk.SetTime(r.RetryAt)
	}
	t.Logf("server down: backoff delays %v", delays)
	if !(delays[0] < delays[1] && delays[1] < delays[2]) {
		t.Errorf("backoff did not grow: %v", delays)
	}
	r := f.waitState(sha, plm.Fetched)
	if r.Attempts != 4 {
		t.Errorf("Result = %+v; want Fetched on attempt 4", r)
	}
	assertCached(t, r, data)
}

func TestRestartServesFromCacheWithoutFetching(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	cacheDir := t.TempDir()
	a, shaA := randomBundle(t, 8<<10)
	b, shaB := randomBundle(t, 8<<10)
	srv.Put(nil, bucket, "a.tgz", a)
	srv.Put(nil, bucket, "b.tgz", b)
	refs := []plm.BundleRef{ref("a.tgz", shaA), ref("b.tgz", shaB)}

	first := newFetcher(t, srv.URL(), cacheDir, nil)
	setCredentials(t, first, adminSecret)
	first.run()
	first.Want(refs)
	first.waitState(shaA, plm.Fetched)
	first.waitState(shaB, plm.Fetched)
	srv.Stop() // storage unreachable across the "restart"

	second := newFetcher(t, srv.URL(), cacheDir, nil)
	second.Want(refs) // before Run: nothing could have been fetched
	for sha, data := range map[string][]byte{shaA: a, shaB: b} {
		r := second.Result(sha)
		if r.State != plm.Fetched {
			t.Fatalf("after restart %s: %+v; want Fetched at once", sha[:8], r)
		}
		assertCached(t, r, data)
	}
	second.run()
	if s := second.Stats(); s.Fetches != 0 || s.CacheLoaded != 2 {
		t.Errorf("after restart: %+v; want zero fetches and 2 bundles loaded", s)
	}
}

func TestTwentyRefsTwoShasTwoFetches(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	x, shaX := randomBundle(t, 32<<10)
	y, shaY := randomBundle(t, 32<<10)
	srv.Put(nil, bucket, "x.tgz", x)
	srv.Put(nil, bucket, "y.tgz", y)
	// 20 policies on different Gateways reference the two bundles PLM stored.
	var refs []plm.BundleRef
	for i := range 20 {
		if i%2 == 0 {
			refs = append(refs, ref("x.tgz", shaX))
		} else {
			refs = append(refs, ref("y.tgz", shaY))
		}
	}

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	f.Want(refs)
	f.run()
	f.waitState(shaX, plm.Fetched)
	f.waitState(shaY, plm.Fetched)
	s := f.Stats()
	t.Logf("fetch attempts per sha256: %v", s.Attempts)
	if s.Fetches != 2 || s.Attempts[shaX] != 1 || s.Attempts[shaY] != 1 {
		t.Errorf("Stats = %+v; want exactly one fetch per sha256", s)
	}
	if n := srv.GetObjectRequests("x.tgz") + srv.GetObjectRequests("y.tgz"); n != 2 {
		t.Errorf("server saw %d GetObject requests; want 2", n)
	}
}

func ptr[T any](v T) *T { return &v }
