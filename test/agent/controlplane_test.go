// Package agente2e tests internal/agent end to end with the real nginx-agent
// and the real NGINX (see dataplane_test.go for how they are isolated), and
// the TokenReview authenticator against a real API server (envtest).
// TestFlood floods the agent port from a second process (flooder_test.go)
// while real agents are served.
//
// Needs: root (private mount namespaces), bin/nginx-agent (hack/nginx-agent.sh),
// Debian's NGINX (make nginx), kube-apiserver and etcd in bin/ (make
// envtest-tools). Run:
//
//	go test ./test/agent/...                          # about 2 min
//	go test -run '^$' -bench Push ./test/agent/...    # push latency
//
// AGENT_E2E_LOGS=1 prints the server's and the data planes' logs of passing
// tests too.
package agente2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// loopbackSeq hands out loopback addresses, one per control or data plane.
var loopbackSeq atomic.Int32

// newLoopback returns an address of 127/8 no other test of this process
// uses; the second octet varies with the process so that concurrent test
// processes rarely meet.
func newLoopback() string {
	n := loopbackSeq.Add(1)
	return fmt.Sprintf("127.%d.%d.%d", 20+os.Getpid()%200, n/250, n%250+1)
}

// freePort returns a TCP port free on ip right now.
func freePort(t testing.TB, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("finding a free port on %s: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects output of several goroutines and processes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// staticAuth is an Authenticator with fixed tokens: the e2e tests are about
// the protocol; tokenreview_test.go tests the TokenReview authenticator
// against a real API server.
type staticAuth struct {
	mu     sync.Mutex
	tokens map[string]agent.Identity
}

func (a *staticAuth) Authenticate(_ context.Context, token string) (agent.Identity, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.tokens[token]
	switch {
	case strings.HasPrefix(token, "later-"):
		return agent.Identity{}, &agent.RetryLater{Err: errors.New("the API server is unavailable")}
	case !ok:
		return agent.Identity{}, errors.New("unknown token")
	}
	return id, nil
}

// recorder keeps the server's events; hook, when set, sees each one first.
// Of refusals it keeps the first maxRefusalsKept: a flood sends many.
type recorder struct {
	mu      sync.Mutex
	events  []agent.Event
	refused int
	hook    func(agent.Event)
}

const maxRefusalsKept = 100

func (r *recorder) observe(e agent.Event) {
	r.mu.Lock()
	hook := r.hook
	if e.Type == agent.EventRefused {
		r.refused++
	}
	if e.Type != agent.EventRefused || r.refused <= maxRefusalsKept {
		r.events = append(r.events, e)
	}
	r.mu.Unlock()
	if hook != nil {
		hook(e)
	}
}

func (r *recorder) setHook(h func(agent.Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook = h
}

func (r *recorder) of(typ agent.EventType) []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// controlPlane is an agent.Server serving on a loopback address of its own.
type controlPlane struct {
	t        testing.TB
	srv      *agent.Server
	ip       string
	port     int
	dir      string
	ca       *ca
	certFile string
	keyFile  string
	auth     *staticAuth
	events   *recorder
	changes  atomic.Int64
	logs     *syncBuffer
	cancel   context.CancelFunc
	done     chan error
}

type controlPlaneOptions struct {
	pushTimeout time.Duration
	// auth replaces the static tokens of admit.
	auth agent.Authenticator
}

func startControlPlane(t testing.TB, opts controlPlaneOptions) *controlPlane {
	t.Helper()
	dir := t.TempDir()
	c := &controlPlane{t: t, ip: newLoopback(), dir: dir, auth: &staticAuth{tokens: map[string]agent.Identity{}},
		events: &recorder{}, logs: &syncBuffer{}}
	c.port = freePort(t, c.ip)
	c.ca = newCA(t, dir)
	c.certFile, c.keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c.rotateCert(1)
	tlsConfig, err := agent.NewReloadingTLSConfig(c.certFile, c.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	log := funcr.New(func(prefix, args string) {
		fmt.Fprintf(c.logs, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	},
		funcr.Options{Verbosity: 2})
	var auth agent.Authenticator = c.auth
	if opts.auth != nil {
		auth = opts.auth
	}
	c.srv, err = agent.NewServer(agent.Options{
		Authenticator: auth,
		TLS:           tlsConfig,
		OnChange:      func(agent.Key) { c.changes.Add(1) },
		Observe:       c.events.observe,
		Log:           logr.Logger(log).WithName("agent-server"),
		PushTimeout:   opts.pushTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	c.serve()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() || os.Getenv("AGENT_E2E_LOGS") != "" {
			t.Logf("control plane log:\n%s", c.logs.String())
		}
	})
	return c
}

// rotateCert writes a new server certificate (serial n) to the files.
func (c *controlPlane) rotateCert(serial int64) {
	certPEM, keyPEM := c.ca.issue(c.t, serial, serverName, c.ip)
	writeFile(c.t, c.keyFile, keyPEM, 0o600)
	writeFile(c.t, c.certFile, certPEM, 0o644)
}

func (c *controlPlane) addr() string { return net.JoinHostPort(c.ip, strconv.Itoa(c.port)) }

// serve starts serving on the control plane's address.
func (c *controlPlane) serve() {
	c.t.Helper()
	var l net.Listener
	var err error
	for range 50 { // the port of a stopped Serve may linger a moment
		if l, err = net.Listen("tcp", c.addr()); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		c.t.Fatalf("listening on %s: %v", c.addr(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan error, 1)
	go func() { c.done <- c.srv.Serve(ctx, l) }()
}

// stop stops serving; the Server keeps its state.
func (c *controlPlane) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.cancel = nil
	select {
	case err := <-c.done:
		if err != nil {
			c.t.Errorf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		c.t.Errorf("Serve did not return 15 s after its context was done")
	}
}

// admit makes token authenticate as pod of gateway. The pods' agents share
// the host's network and dial loopback addresses: their connections come
// from 127.0.0.1, the pods' address.
func (c *controlPlane) admit(token string, pod types.NamespacedName, gateway agent.Key) {
	c.auth.mu.Lock()
	defer c.auth.mu.Unlock()
	c.auth.tokens[token] = agent.Identity{Pod: pod, Gateway: gateway, Addresses: podAddress}
}

// podAddress is where every data plane of these tests connects from.
var podAddress = agent.PodAddresses{IPv4: netip.MustParseAddr("127.0.0.1")}

// waitFor polls cond until it holds or timeout passes; cond says what it saw.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, seen := cond()
		if ok {
			return
		}
		last = seen
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last seen: %s", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPod waits until pod of key is connected and in state with the desired
// version, and returns its status.
func (c *controlPlane) waitPod(key agent.Key, pod types.NamespacedName, state agent.ApplyState, timeout time.Duration) agent.PodStatus {
	c.t.Helper()
	var got agent.PodStatus
	waitFor(c.t, timeout, fmt.Sprintf("pod %s %s", pod, state), func() (bool, string) {
		st := c.srv.Status(key)
		for _, p := range st.Pods {
			if p.Pod == pod {
				got = p
				return p.Connected && p.State == state, fmt.Sprintf("version %.12s %+v", st.Version, p)
			}
		}
		return false, fmt.Sprintf("version %.12s, pods %+v", st.Version, st.Pods)
	})
	return got
}
