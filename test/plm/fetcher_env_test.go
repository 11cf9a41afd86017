package plm_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

// fetcher is a running plm.Fetcher whose OnChange events arrive on a
// channel, so tests wait for outcomes rather than sleep.
type fetcher struct {
	*plm.Fetcher
	t      testing.TB
	events chan string
	cache  string
}

func newFetcher(t testing.TB, endpoint, cacheDir string, mutate func(*plm.Options)) *fetcher {
	t.Helper()
	f := &fetcher{t: t, events: make(chan string, 10000), cache: cacheDir}
	opts := plm.Options{
		Endpoint:   endpoint,
		CacheDir:   cacheDir,
		MinBackoff: 50 * time.Millisecond,
		MaxBackoff: time.Second,
		OnChange: func(sha string) {
			select {
			case f.events <- sha:
			default: // full: waitFor has wake-ups queued already
			}
		},
	}
	if tt, ok := t.(*testing.T); ok {
		opts.Log = testr.New(tt)
	}
	if mutate != nil {
		mutate(&opts)
	}
	pf, err := plm.New(opts)
	if err != nil {
		t.Fatalf("plm.New: %v", err)
	}
	f.Fetcher = pf
	return f
}

// run starts the workers until the test ends.
func (f *fetcher) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("Run: %v", err)
		}
	})
}

// waitFor waits event by event until cond holds; the deadline only stops a
// broken test from hanging.
func (f *fetcher) waitFor(sha, what string, cond func(plm.Result) bool) plm.Result {
	f.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if r := f.Result(sha); cond(r) {
			return r
		}
		select {
		case <-f.events:
		case <-deadline:
			f.t.Fatalf("%s… never became %s; last Result: %+v", sha[:8], what, f.Result(sha))
		}
	}
}

func (f *fetcher) waitState(sha string, s plm.State) plm.Result {
	f.t.Helper()
	return f.waitFor(sha, string(s), func(r plm.Result) bool { return r.State == s })
}

func (f *fetcher) waitAttempts(sha string, n int) plm.Result {
	f.t.Helper()
	return f.waitFor(sha, fmt.Sprintf("%d attempts", n), func(r plm.Result) bool { return r.Attempts >= n })
}

// randomBundle stands in for a compiled bundle: incompressible bytes.
func randomBundle(t testing.TB, size int) ([]byte, string) {
	t.Helper()
	b := make([]byte, size)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

func newCA(t testing.TB, name string) *issuer.CA {
	t.Helper()
	ca, err := issuer.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// serverFiles issues a server certificate for 127.0.0.1 and writes it out.
func serverFiles(t testing.TB, ca *issuer.CA, dir, prefix string) s3test.TLSFiles {
	t.Helper()
	p, err := ca.IssueServing("storage", []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return s3test.TLSFiles{Cert: writeFile(t, dir, prefix+".crt", p.CertPEM), Key: writeFile(t, dir, prefix+".key", p.KeyPEM)}
}

func clientPair(t testing.TB, ca *issuer.CA) issuer.KeyPair {
	t.Helper()
	p, err := ca.IssueClient("gatewall", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
