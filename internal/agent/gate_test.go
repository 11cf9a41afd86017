package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/datafile"
)

// These tests run the real server over real TLS on loopback with a bare
// mpi.v1 client; test/agent floods it while a real nginx-agent is served.

// countingAuth accepts the tokens in good as tokens of pods at 127.0.0.1
// (where the tests dial from by default), or, for a token "<pod>@<ip>", of
// the pod at ip; it says RetryLater to tokens
// "later-…", refuses the rest, and counts its calls by token. hook, when
// set, runs at the start of each call.
type countingAuth struct {
	mu    sync.Mutex
	good  map[string]Identity
	calls map[string]int
	hook  func(ctx context.Context, token string)
}

var loopback = PodAddresses{IPv4: netip.MustParseAddr("127.0.0.1")}

func newCountingAuth(good ...string) *countingAuth {
	a := &countingAuth{good: map[string]Identity{}, calls: map[string]int{}}
	for _, tok := range good {
		name, ip, found := strings.Cut(tok, "@")
		addrs := loopback
		if found {
			addrs = PodAddresses{IPv4: netip.MustParseAddr(ip)}
		}
		a.good[tok] = Identity{Pod: types.NamespacedName{Namespace: "ns", Name: name}, Gateway: Key{Namespace: "ns", Name: "gw"}, Addresses: addrs}
	}
	return a
}

func (a *countingAuth) Authenticate(ctx context.Context, token string) (Identity, error) {
	a.mu.Lock()
	a.calls[token]++
	hook := a.hook
	id, ok := a.good[token]
	a.mu.Unlock()
	if hook != nil {
		hook(ctx, token)
	}
	switch {
	case strings.HasPrefix(token, "later-"):
		return Identity{}, &RetryLater{Err: errors.New("the API server is unavailable")}
	case !ok:
		return Identity{}, errors.New("unknown token")
	}
	return id, nil
}

func (a *countingAuth) reviews(token string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[token]
}

func (a *countingAuth) total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.calls {
		n += c
	}
	return n
}

// screeningAuth is a countingAuth that screens out tokens "screened-…".
type screeningAuth struct{ *countingAuth }

func (screeningAuth) ScreenToken(token string) error {
	if strings.HasPrefix(token, "screened-") {
		return errors.New("screened out")
	}
	return nil
}

// gateHarness is a Server serving on 127.0.0.1 with a clock the test moves.
type gateHarness struct {
	t     *testing.T
	srv   *Server
	addr  string
	read  atomic.Int64 // bytes the server read from its connections
	logs  *syncLog
	mu    sync.Mutex
	clock time.Time
}

type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintln(&l.buf, prefix, args)
	}, funcr.Options{})
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// generousLimits lift the per-peer review budget, which most tests do not
// look at.
func generousLimits() limits {
	lim := defaultLimits()
	lim.reviewBurstPerPeer = 1000
	return lim
}

func startGate(t *testing.T, auth Authenticator, lim limits, options ...func(*Options)) *gateHarness {
	t.Helper()
	h := &gateHarness{t: t, logs: &syncLog{}, clock: time.Unix(1_000_000, 0)}
	certPEM, keyPEM := selfSigned(t, 1)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Authenticator: auth, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}, Log: h.logs.logger()}
	for _, o := range options {
		o(&opts)
	}
	h.srv, err = NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.now = func() time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.clock
	}
	h.srv.gate.limits = lim
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.srv.Serve(ctx, &countingListener{Listener: l, read: &h.read}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", h.logs)
		}
	})
	return h
}

func (h *gateHarness) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clock = h.clock.Add(d)
}

// dial connects from the loopback address from (127.0.0.1 when empty).
func (h *gateHarness) dial(from string) *grpc.ClientConn {
	h.t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	// The server's certificate is the test's own: these tests are about
	// what the server refuses, not about verifying it.
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func withToken(t *testing.T, token string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	if token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", token, "uuid", "gate-test")
}

// health is the cheapest RPC: any authenticated agent gets OK.
func health(t *testing.T, conn *grpc.ClientConn, token string) error {
	_, err := mpi.NewCommandServiceClient(conn).UpdateDataPlaneHealth(withToken(t, token), &mpi.UpdateDataPlaneHealthRequest{})
	return err
}

func wantStatus(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	if st, _ := status.FromError(err); st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("%s: got %v, want %v saying %q", what, err, code, msg)
	}
}

// countingListener counts the bytes the server reads.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestTapRefusals: what needs no review is refused without one, with a
// status saying why; a token that needs one is reviewed once.
func TestTapRefusals(t *testing.T) {
	auth := screeningAuth{newCountingAuth("good")}
	h := startGate(t, auth, generousLimits())
	conn := h.dial("")
	for name, tc := range map[string]struct {
		token   string
		code    codes.Code
		msg     string
		reviews int
	}{
		"no token":                       {token: "", code: codes.Unauthenticated, msg: "no token"},
		"spaces inside":                  {token: "two words", code: codes.Unauthenticated, msg: "spaces, control or non-ASCII"},
		"longer than any token":          {token: strings.Repeat("a", maxTokenBytes+1), code: codes.Unauthenticated, msg: "longer than any ServiceAccount token"},
		"screened out":                   {token: "screened-1", code: codes.Unauthenticated, msg: "token refused: screened out"},
		"unknown":                        {token: "unknown-1", code: codes.Unauthenticated, msg: "token refused: unknown token", reviews: 1},
		"good":                           {token: "good", code: codes.OK, reviews: 1},
		"good with the Bearer scheme":    {token: "Bearer good", code: codes.OK},
		"the API server is unavailable":  {token: "later-1", code: codes.Unavailable, msg: "the API server is unavailable", reviews: 1},
		"metadata over the header limit": {token: strings.Repeat("a", maxHeaderListSize+1), code: codes.Internal, msg: "maximum size"},
	} {
		t.Run(name, func(t *testing.T) {
			err := health(t, conn, tc.token)
			wantStatus(t, name, err, tc.code, tc.msg)
			if got := auth.reviews(strings.TrimPrefix(tc.token, "Bearer ")); tc.reviews != 0 && got != tc.reviews {
				t.Fatalf("token reviewed %d times, want %d", got, tc.reviews)
			}
		})
	}
	// Only "unknown-1", "good" and "later-1" ever reached the Authenticator.
	if got := auth.total(); got != 3 {
		t.Fatalf("%d reviews in all, want 3", got)
	}
	if !strings.Contains(h.logs.String(), `"Refused an agent"`) {
		t.Fatal("refusals are not logged")
	}
}

// TestVerdictsAreReused: an accepted token is not reviewed again for
// acceptedTTL, a refused one for refusedTTL; a refusal that may pass
// later (RetryLater) is never reused.
func TestVerdictsAreReused(t *testing.T) {
	auth := newCountingAuth("good")
	h := startGate(t, auth, generousLimits())
	conn := h.dial("")
	calls := func(token string, n int) {
		t.Helper()
		for range n {
			_ = health(t, conn, token)
		}
	}
	calls("good", 5)
	calls("bad", 5)
	calls("later-1", 3)
	if g, b, l := auth.reviews("good"), auth.reviews("bad"), auth.reviews("later-1"); g != 1 || b != 1 || l != 3 {
		t.Fatalf("reviews: good %d, bad %d, later %d; want 1, 1, 3", g, b, l)
	}
	wantStatus(t, "bad, from the cache", health(t, conn, "bad"), codes.Unauthenticated, "token refused: unknown token")

	h.advance(refusedTTL)
	calls("good", 1)
	calls("bad", 1)
	if g, b := auth.reviews("good"), auth.reviews("bad"); g != 1 || b != 2 {
		t.Fatalf("after refusedTTL: reviews good %d, bad %d; want 1, 2", g, b)
	}
	h.advance(acceptedTTL)
	calls("good", 1)
	if g := auth.reviews("good"); g != 2 {
		t.Fatalf("after acceptedTTL: good reviewed %d times, want 2", g)
	}
}

// TestReviewBudgets: a peer address gets reviewBurstPerPeer new tokens
// reviewed at once, then reviewsPerSecondPerPeer; other addresses are not
// held back. At most pendingReviews reviews run at once.
func TestReviewBudgets(t *testing.T) {
	auth := newCountingAuth()
	lim := defaultLimits()
	lim.reviewBurstPerPeer, lim.reviewsPerSecondPerPeer = 3, 1
	h := startGate(t, auth, lim)
	flooder, other := h.dial("127.0.0.2"), h.dial("127.0.0.3")
	for i := range 3 {
		wantStatus(t, "within the burst", health(t, flooder, fmt.Sprint("new-", i)), codes.Unauthenticated, "unknown token")
	}
	wantStatus(t, "beyond the burst", health(t, flooder, "new-3"), codes.ResourceExhausted, "too many new tokens from 127.0.0.2")
	wantStatus(t, "a token refused a moment ago costs no budget", health(t, flooder, "new-0"), codes.Unauthenticated, "unknown token")
	wantStatus(t, "another address", health(t, other, "other-0"), codes.Unauthenticated, "unknown token")
	h.advance(time.Second)
	wantStatus(t, "a second later", health(t, flooder, "new-4"), codes.Unauthenticated, "unknown token")
	wantStatus(t, "and no more", health(t, flooder, "new-5"), codes.ResourceExhausted, "too many new tokens")
	if got := auth.total(); got != 5 {
		t.Fatalf("%d reviews, want 5", got)
	}

	// Reviews that hang hold their places until they end.
	hang := make(chan struct{})
	started := make(chan struct{}, 10)
	auth.mu.Lock()
	auth.hook = func(ctx context.Context, _ string) {
		started <- struct{}{}
		select {
		case <-hang:
		case <-ctx.Done():
		}
	}
	auth.mu.Unlock()
	h.srv.gate.mu.Lock()
	h.srv.gate.limits.pendingReviews = 2
	h.srv.gate.mu.Unlock()
	h.advance(time.Hour) // full budgets
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _ = health(t, other, fmt.Sprint("hanging-", i)) })
		<-started
	}
	wantStatus(t, "a third review at once", health(t, flooder, "third"), codes.ResourceExhausted, "2 agents are being authenticated already")
	close(hang)
	wg.Wait()
	wantStatus(t, "once the others ended", health(t, flooder, "third"), codes.Unauthenticated, "unknown token")
}

// TestRequestsAreReadAfterAuthentication: the token is reviewed before the
// request is read, for unary and streaming RPCs alike: when the review
// starts, the server has read no more of a 3 MiB request than one HTTP/2
// window.
func TestRequestsAreReadAfterAuthentication(t *testing.T) {
	const size = 3 << 20
	auth := newCountingAuth()
	h := startGate(t, auth, generousLimits())
	var readAtReview atomic.Int64
	auth.hook = func(context.Context, string) { readAtReview.Store(h.read.Load()) }
	big := bytes.Repeat([]byte("x"), size)
	for name, call := range map[string]func(conn *grpc.ClientConn, ctx context.Context) error{
		"unary": func(conn *grpc.ClientConn, ctx context.Context) error {
			_, err := mpi.NewFileServiceClient(conn).UpdateFile(ctx, &mpi.UpdateFileRequest{Contents: &mpi.FileContents{Contents: big}})
			return err
		},
		"client streaming": func(conn *grpc.ClientConn, ctx context.Context) error {
			st, err := mpi.NewFileServiceClient(conn).UpdateFileStream(ctx)
			if err != nil {
				return err
			}
			_ = st.Send(&mpi.FileDataChunk{Chunk: &mpi.FileDataChunk_Content{Content: &mpi.FileDataChunkContent{Data: big}}})
			_, err = st.CloseAndRecv()
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := h.read.Load()
			err := call(h.dial(""), withToken(t, "unknown-"+strings.ReplaceAll(name, " ", "-")))
			wantStatus(t, name, err, codes.Unauthenticated, "unknown token")
			if got := readAtReview.Load() - before; got >= size/4 {
				t.Fatalf("the server had read %d bytes of the connection when the review started, the request is %d", got, size)
			}
		})
	}
}

// TestAuthenticatingRegistrar: a unary method registered through it never
// decodes the request of a caller it refuses, and runs with the identity
// of one it accepts.
func TestAuthenticatingRegistrar(t *testing.T) {
	auth := newCountingAuth("good")
	g := newGate(auth, logr.Discard(), func(Event) {}, time.Now)
	var desc *grpc.ServiceDesc
	reg := authenticatingRegistrar{server: registrarFunc(func(d *grpc.ServiceDesc, _ any) { desc = d }), gate: g}
	var handled Identity
	reg.RegisterService(&grpc.ServiceDesc{
		ServiceName: "test.Service",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(nil); err != nil {
				return nil, err
			}
			handled, _ = IdentityFrom(ctx)
			return "ok", nil
		}}},
	}, nil)
	decoded := 0
	dec := func(any) error { decoded++; return nil }
	call := func(token string) error {
		ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}})
		ctx = context.WithValue(ctx, pendingReviewKey{}, &pendingReview{token: token, sum: sha256.Sum256([]byte(token)), release: func() {}})
		_, err := desc.Methods[0].Handler(nil, ctx, dec, nil)
		return err
	}
	wantStatus(t, "refused", call("bad"), codes.Unauthenticated, "unknown token")
	if decoded != 0 {
		t.Fatal("the request of a refused caller was decoded")
	}
	if err := call("good"); err != nil || decoded != 1 || handled.Pod.Name != "good" {
		t.Fatalf("accepted caller: err %v, decoded %d, identity %+v", err, decoded, handled)
	}
}

type registrarFunc func(*grpc.ServiceDesc, any)

func (f registrarFunc) RegisterService(d *grpc.ServiceDesc, impl any) { f(d, impl) }

// TestRPCsPerPod: an authenticated pod has at most rpcsPerPod RPCs in
// flight; an RPC that ends gives its place back.
func TestRPCsPerPod(t *testing.T) {
	lim := generousLimits()
	lim.rpcsPerPod = 2
	h := startGate(t, newCountingAuth("good", "other"), lim)
	gw := Key{Namespace: "ns", Name: "gw"}
	big := bytes.Repeat([]byte("x"), 8<<20)
	h.srv.SetConfig(gw, []datafile.File{{Path: "/etc/nginx/big.conf", Data: big}})
	conn := h.dial("")
	// Downloads whose chunks the client does not read stay in flight: the
	// server waits for the client's flow-control window.
	var cancels []context.CancelFunc
	for range 2 {
		ctx, cancel := context.WithCancel(withToken(t, "good"))
		cancels = append(cancels, cancel)
		st, err := mpi.NewFileServiceClient(conn).GetFileStream(ctx, &mpi.GetFileRequest{FileMeta: &mpi.FileMeta{
			Name: "/etc/nginx/big.conf", Hash: files.GenerateHash(big)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil { // the header: the download runs
			t.Fatal(err)
		}
	}
	wantStatus(t, "a third RPC", health(t, conn, "good"), codes.ResourceExhausted, "pod ns/good has 2 RPCs in flight already")
	if err := health(t, conn, "other"); err != nil {
		t.Fatalf("another pod's RPC: %v", err)
	}
	cancels[0]()
	waitUntil(t, func() bool { return health(t, conn, "good") == nil })
}

// TestTokenOnlyFromItsPod: a pod's token is accepted only from the pod's
// address, whether it is reviewed then or its verdict reused; a refusal
// from elsewhere does not refuse the pod, and is reported as such. With
// AnyPeerAddress the address is not checked.
func TestTokenOnlyFromItsPod(t *testing.T) {
	auth := newCountingAuth("pod@127.0.0.2")
	var refusals []Event
	var mu sync.Mutex
	h := startGate(t, auth, generousLimits(), func(o *Options) {
		o.Observe = func(ev Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Type == EventRefused {
				refusals = append(refusals, ev)
			}
		}
	})
	pod, thief := h.dial("127.0.0.2"), h.dial("127.0.0.3")
	// The thief comes first: its review accepts the token, for the pod.
	wantStatus(t, "the token from another address", health(t, thief, "pod@127.0.0.2"), codes.Unauthenticated,
		"the token of pod ns/pod was presented from 127.0.0.3, which is not the pod's address (127.0.0.2)")
	if err := health(t, pod, "pod@127.0.0.2"); err != nil {
		t.Fatalf("the pod, after a thief: %v", err)
	}
	wantStatus(t, "the thief again, from the cached verdict", health(t, thief, "pod@127.0.0.2"), codes.Unauthenticated,
		"not the pod's address")
	if n := auth.reviews("pod@127.0.0.2"); n != 1 {
		t.Fatalf("%d reviews, want 1", n)
	}
	mu.Lock()
	if len(refusals) != 2 || refusals[0].Reason != RefusedAddress || refusals[1].Reason != RefusedAddress {
		t.Fatalf("refusals %+v, want two for the address", refusals)
	}
	mu.Unlock()
	if logs := h.logs.String(); !strings.Contains(logs, `"refusal"="address"`) {
		t.Fatalf("the refusal is not logged:\n%s", logs)
	}

	anywhere := startGate(t, newCountingAuth("pod@127.0.0.2"), generousLimits(), func(o *Options) { o.AnyPeerAddress = true })
	if err := health(t, anywhere.dial("127.0.0.3"), "pod@127.0.0.2"); err != nil {
		t.Fatalf("any address allowed: %v", err)
	}
}

// TestRefusalReasons: every refusal is classified for its metric, and a
// refused pod's is logged apart from bad tokens, which any peer can flood.
func TestRefusalReasons(t *testing.T) {
	podErr := fmt.Errorf("token refused: %w", &PodRefused{Pod: types.NamespacedName{Namespace: "ns", Name: "p"}, Gateway: Key{Namespace: "ns", Name: "gw"}, Err: errors.New("not sealed")})
	for _, tc := range []struct {
		err    error
		code   codes.Code
		reason RefusalReason
	}{
		{errors.New("token not authenticated"), codes.Unauthenticated, RefusedToken},
		{podErr, codes.Unauthenticated, RefusedPod},
		{&addressRefused{errors.New("elsewhere")}, codes.Unauthenticated, RefusedAddress},
		{&limitRefused{errors.New("too many")}, codes.ResourceExhausted, RefusedLimit},
		{&RetryLater{errors.New("no address yet")}, codes.Unavailable, RefusedUnavailable},
	} {
		if code, reason := classify(tc.err); code != tc.code || reason != tc.reason {
			t.Errorf("%v: %v %s, want %v %s", tc.err, code, reason, tc.code, tc.reason)
		}
	}
	// A flood of bad tokens leaves room in the log for a refused pod.
	logs := &syncLog{}
	var seen []Event
	g := newGate(newCountingAuth(), logs.logger(), func(ev Event) { seen = append(seen, ev) }, time.Now)
	for range 100 {
		_ = g.refuse(context.Background(), "/m", errors.New("garbage"))
	}
	_ = g.refuse(context.Background(), "/m", podErr)
	if !strings.Contains(logs.String(), `"pod"="ns/p" "gateway"="ns/gw"`) {
		t.Fatalf("the refused pod is not logged after a flood of bad tokens:\n%s", logs)
	}
	if last := seen[len(seen)-1]; last.Pod.Name != "p" || last.Key.Name != "gw" || last.Reason != RefusedPod {
		t.Fatalf("the refused pod's event: %+v", last)
	}
}
