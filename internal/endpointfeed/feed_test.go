package endpointfeed

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
)

var gw = types.NamespacedName{Namespace: "ns", Name: "gw"}

// testTLS is a self-signed server certificate for localhost and the CA
// file that trusts it.
func testTLS(t testing.TB) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, ca
}

// identifyByToken stands in for the agent server's authentication (a
// TokenReview, tested with the agent server): the token is the pod's name;
// "refused" is refused.
func identifyByToken(ctx context.Context) (types.NamespacedName, types.NamespacedName, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	tok := md.Get("authorization")
	if len(tok) != 1 || tok[0] == "refused" {
		return types.NamespacedName{}, types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: "ns", Name: tok[0]}, gw, true
}

// feed is a Server on a real gRPC server over TLS on loopback.
type feed struct {
	*Server
	addr, ca string
	tls      *tls.Config
	grpc     *grpc.Server
	changes  chan types.NamespacedName
}

func startFeed(t testing.TB) *feed {
	t.Helper()
	f := &feed{changes: make(chan types.NamespacedName, 100)}
	s, err := NewServer(Options{Identify: identifyByToken, Log: logr.Discard(),
		OnChange: func(g types.NamespacedName) { f.changes <- g }})
	if err != nil {
		t.Fatal(err)
	}
	f.Server = s
	f.tls, f.ca = testTLS(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	f.serve(t, l)
	return f
}

func (f *feed) serve(t testing.TB, l net.Listener) {
	f.grpc = grpc.NewServer(grpc.Creds(credentials.NewTLS(f.tls)))
	f.Register(f.grpc)
	go func() { _ = f.grpc.Serve(l) }()
	t.Cleanup(f.grpc.Stop)
}

// recorder is an Applier that records what it applies; block, when set,
// holds Apply until it is closed; reject refuses every update; refuse
// refuses the upstreams it names, as NGINX does those it has no room for.
type recorder struct {
	mu      sync.Mutex
	updates []endpoints.Update
	set     endpoints.Set
	block   chan struct{}
	reject  bool
	refuse  map[string]string
	applied chan struct{}
}

func newRecorder() *recorder { return &recorder{applied: make(chan struct{}, 1000)} }

func (r *recorder) Apply(ctx context.Context, u endpoints.Update, set endpoints.Set) (map[string]string, error) {
	r.mu.Lock()
	block, reject := r.block, r.reject
	r.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if reject {
		return nil, fmt.Errorf("%w: a test refusal", ErrRejected)
	}
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.set = set
	refused := map[string]string{}
	for id, why := range r.refuse {
		if _, ok := u.Set[id]; ok {
			refused[id] = why
		}
	}
	r.mu.Unlock()
	r.applied <- struct{}{}
	return refused, nil
}

func (r *recorder) state() (endpoints.Set, []endpoints.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set, append([]endpoints.Update(nil), r.updates...)
}

// runClient runs a client for pod until the test ends.
func runClient(t *testing.T, f *feed, pod string, a Applier) {
	t.Helper()
	runClientWith(t, f, pod, a, DNSOptions{})
}

// runClientWith runs a client with these DNS options.
func runClientWith(t *testing.T, f *feed, pod string, a Applier, dns DNSOptions) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(pod+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, ClientOptions{Address: f.addr, ServerName: "localhost", CAFile: f.ca, TokenFile: tok, Applier: a,
			Log: logr.Discard(), MaxBackoff: 200 * time.Millisecond, DNS: dns})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func set(eps ...string) endpoints.Set {
	return endpoints.Set{appID: {Name: "ns_app_80", Endpoints: eps}, otherID: {Name: "ns_other_80", Endpoints: []string{}}}
}

func podStatus(f *feed, pod string) (PodStatus, bool) {
	for _, p := range f.Status(gw).Pods {
		if p.Pod.Name == pod {
			return p, true
		}
	}
	return PodStatus{}, false
}

// TestWholeSetThenChanges: a pod first receives the whole set, then only
// what changed; it acknowledges each version, and the server knows which
// it holds.
func TestWholeSetThenChanges(t *testing.T) {
	f := startFeed(t)
	v1 := f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	rec := newRecorder()
	runClient(t, f, "pod-a", rec)
	eventually(t, "the whole set", func() bool { s, _ := rec.state(); return reflect.DeepEqual(s, set("10.0.0.1:80")) })
	eventually(t, "the ack of v1", func() bool { p, ok := podStatus(f, "pod-a"); return ok && p.Version == v1 && p.Current })
	v2 := f.Set(gw, set("10.0.0.1:80", "10.0.0.2:80"), endpoints.Resolver{})
	eventually(t, "the change", func() bool { s, _ := rec.state(); return reflect.DeepEqual(s, set("10.0.0.1:80", "10.0.0.2:80")) })
	eventually(t, "the ack of v2", func() bool { p, ok := podStatus(f, "pod-a"); return ok && p.Version == v2 && p.Current })
	if again := f.Set(gw, set("10.0.0.1:80", "10.0.0.2:80"), endpoints.Resolver{}); again != v2 {
		t.Errorf("an equal set made version %d, want %d kept", again, v2)
	}
	_, updates := rec.state()
	if len(updates) != 2 || !updates[0].Full || updates[1].Full || len(updates[1].Set) != 1 || len(updates[1].Deleted) != 0 {
		t.Errorf("updates %+v: want the whole set, then the one upstream that changed", updates)
	}
}

// TestPodWaitsForTheFirstSet: a pod that connects before the Gateway's
// first set (a manager that just started) is sent nothing, and keeps what
// it has, until the set is known.
func TestPodWaitsForTheFirstSet(t *testing.T) {
	f := startFeed(t)
	rec := newRecorder()
	runClient(t, f, "pod-a", rec)
	eventually(t, "the stream", func() bool { _, ok := podStatus(f, "pod-a"); return ok })
	time.Sleep(100 * time.Millisecond)
	if _, updates := rec.state(); len(updates) != 0 {
		t.Fatalf("sent %+v before the Gateway's endpoints were known", updates)
	}
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	eventually(t, "the whole set", func() bool { _, u := rec.state(); return len(u) == 1 && u[0].Full })
}

// TestSlowPodGetsTheNewest: while a pod applies one update, the versions
// set meanwhile are coalesced: it then receives one update taking it to
// the newest set.
func TestSlowPodGetsTheNewest(t *testing.T) {
	f := startFeed(t)
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	rec := newRecorder()
	runClient(t, f, "pod-a", rec)
	eventually(t, "the whole set", func() bool { _, u := rec.state(); return len(u) == 1 })
	block := make(chan struct{})
	rec.mu.Lock()
	rec.block = block
	rec.mu.Unlock()
	f.Set(gw, set("10.0.0.2:80"), endpoints.Resolver{})
	time.Sleep(50 * time.Millisecond) // the pod is applying it
	var last uint64
	for i := 3; i < 20; i++ {
		last = f.Set(gw, set(fmt.Sprintf("10.0.0.%d:80", i)), endpoints.Resolver{})
	}
	close(block)
	eventually(t, "the newest set", func() bool { s, _ := rec.state(); return reflect.DeepEqual(s, set("10.0.0.19:80")) })
	eventually(t, "the newest ack", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == last && p.Current })
	if _, updates := rec.state(); len(updates) != 3 {
		t.Errorf("the pod received %d updates for 19 versions; want 3: the first, the one it was applying, and the newest", len(updates))
	}
}

// TestReconnectGetsTheWholeSet: a pod whose stream breaks (a new leader)
// keeps its endpoints meanwhile and receives the whole set again.
func TestReconnectGetsTheWholeSet(t *testing.T) {
	f := startFeed(t)
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	rec := newRecorder()
	runClient(t, f, "pod-a", rec)
	eventually(t, "the whole set", func() bool { _, u := rec.state(); return len(u) == 1 })
	addr := f.addr
	f.grpc.Stop()
	eventually(t, "the pod gone", func() bool { _, ok := podStatus(f, "pod-a"); return !ok })
	f.Set(gw, set("10.0.0.5:80"), endpoints.Resolver{})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f.serve(t, l)
	eventually(t, "the whole set again", func() bool {
		_, u := rec.state()
		return len(u) == 2 && u[1].Full && reflect.DeepEqual(u[1].Set, set("10.0.0.5:80"))
	})
}

// TestRefusedUpdate: a pod that refuses an update says so; the server
// reports the error (and tells its OnChange) until the pod applies one.
func TestRefusedUpdate(t *testing.T) {
	f := startFeed(t)
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	rec := newRecorder()
	rec.reject = true
	runClient(t, f, "pod-a", rec)
	eventually(t, "the error", func() bool { p, ok := podStatus(f, "pod-a"); return ok && strings.Contains(p.Error, "a test refusal") })
	if p, _ := podStatus(f, "pod-a"); p.Current || !strings.Contains(p.String(), "could not apply") {
		t.Errorf("status %+v (%s)", p, p)
	}
	rec.mu.Lock()
	rec.reject = false
	rec.mu.Unlock()
	f.Set(gw, set("10.0.0.2:80"), endpoints.Resolver{})
	eventually(t, "the error cleared", func() bool { p, ok := podStatus(f, "pod-a"); return ok && p.Error == "" && p.Current })
	if _, u := rec.state(); len(u) != 1 || !u[0].Full {
		t.Errorf("after a refusal, the pod got %+v; want the next version whole", u)
	}
	select {
	case g := <-f.changes:
		if g != gw {
			t.Errorf("OnChange(%s)", g)
		}
	default:
		t.Error("OnChange was not called")
	}
}

// TestRefusedPeer: a stream whose peer the agent server does not know is
// refused, and nothing is sent.
func TestRefusedPeer(t *testing.T) {
	f := startFeed(t)
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	rec := newRecorder()
	runClient(t, f, "refused", rec)
	time.Sleep(300 * time.Millisecond)
	if _, u := rec.state(); len(u) != 0 || len(f.Status(gw).Pods) != 0 {
		t.Errorf("a refused peer got %+v", u)
	}
}

const appID, otherID = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"

// TestInvalidUpstreamIsRefusedAlone: an upstream the data plane's Lua
// would refuse never reaches the Applier, and the others of the update do.
func TestInvalidUpstreamIsRefusedAlone(t *testing.T) {
	f := startFeed(t)
	f.Set(gw, endpoints.Set{appID: {Name: "ns_app_80", Endpoints: []string{"backend:80"}}, otherID: {Name: "ns_other_80", Endpoints: []string{"10.0.0.1:80"}}}, endpoints.Resolver{})
	rec := newRecorder()
	runClient(t, f, "pod-a", rec)
	eventually(t, "the refusal", func() bool { p, ok := podStatus(f, "pod-a"); return ok && len(p.Refused) == 1 })
	p, _ := podStatus(f, "pod-a")
	if r := p.Refused[0]; r.ID != appID || r.Name != "ns_app_80" || !strings.Contains(r.Reason, "backend:80") || p.Error != "" || p.Current {
		t.Errorf("status %+v", p)
	}
	if _, u := rec.state(); len(u) != 1 || len(u[0].Set) != 1 || u[0].Set[otherID].Endpoints[0] != "10.0.0.1:80" {
		t.Errorf("the Applier got %+v; want the other upstream only", u)
	}
}

// TestRefusedUpstreamIsNotSentAgain: an upstream a pod could not apply (no
// room for it) is reported until an update sets it again, and is sent
// again only when it changes: the pod would refuse the same again. The
// others are applied meanwhile.
func TestRefusedUpstreamIsNotSentAgain(t *testing.T) {
	f := startFeed(t)
	rec := newRecorder()
	rec.refuse = map[string]string{appID: "no room in the endpoints dict: no memory"}
	f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	runClient(t, f, "pod-a", rec)
	eventually(t, "the refusal", func() bool { p, ok := podStatus(f, "pod-a"); return ok && len(p.Refused) == 1 })
	if p, _ := podStatus(f, "pod-a"); p.Current || p.Error != "" || !strings.Contains(p.String(), "ns_app_80 (no room in the endpoints dict: no memory)") {
		t.Errorf("status %+v (%s)", p, p)
	}
	select {
	case <-f.changes:
	case <-time.After(5 * time.Second):
		t.Error("OnChange was not called for the refusal")
	}
	other := set("10.0.0.1:80")
	other[otherID] = endpoints.Upstream{Name: "ns_other_80", Endpoints: []string{"10.0.0.9:80"}}
	v2 := f.Set(gw, other, endpoints.Resolver{})
	eventually(t, "the ack of v2", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == v2 })
	if _, u := rec.state(); len(u) != 2 || len(u[1].Set) != 1 || u[1].Set[otherID].Endpoints == nil {
		t.Fatalf("updates %+v: want the refused upstream not sent again, the other sent", u)
	}
	if p, _ := podStatus(f, "pod-a"); len(p.Refused) != 1 || p.Current {
		t.Errorf("after an update that did not set it, status %+v; want the upstream still refused", p)
	}
	rec.mu.Lock()
	rec.refuse = nil
	rec.mu.Unlock()
	changed := set("10.0.0.2:80")
	changed[otherID] = other[otherID]
	v3 := f.Set(gw, changed, endpoints.Resolver{})
	eventually(t, "the refusal cleared", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == v3 && p.Current && len(p.Refused) == 0 })
	if _, u := rec.state(); len(u) != 3 || len(u[2].Set) != 1 || u[2].Set[appID].Endpoints[0] != "10.0.0.2:80" {
		t.Errorf("updates %+v: want the upstream sent again once it changed", u)
	}
}
