package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/logsample"
)

// Any pod of the cluster can reach the agent port, so what an
// unauthenticated peer can make the server hold is bounded:
//
//   - The tap (grpc.InTapHandle) runs in the connection's reader before a
//     stream exists, so before any of its request is read. It refuses at
//     once what needs no I/O to refuse: no TLS 1.3, no token, a token no
//     Authenticator could accept (TokenScreener), a token refused a moment
//     ago. A token accepted a moment ago passes with its identity.
//   - Any other token needs the Authenticator (a TokenReview), which the
//     tap must not wait for (it holds the connection's lock). It passes
//     only while fewer than maxPendingReviews streams await a review and its
//     peer address has review budget left (reviewBurstPerPeer, then
//     reviewsPerSecondPerPeer). Until the review ends, the stream's request
//     waits unread in its flow-control window (streamWindow).
//   - An authenticated pod has at most maxRPCsPerPod RPCs in flight.
//   - The review runs before the request is read: in the stream interceptor
//     for streaming RPCs, and for unary RPCs — whose interceptors run after
//     the request is decoded — in each method's handler, wrapped when it is
//     registered (authenticatingRegistrar). The unary interceptor is the
//     backstop of a service registered around the registrar.
const (
	maxPendingReviews       = 32
	reviewsPerSecondPerPeer = 2
	reviewBurstPerPeer      = 10
	// reviewTimeout bounds one review (the API server may hang).
	reviewTimeout = 10 * time.Second
	// maxPeersTracked bounds the review budgets kept by peer address.
	maxPeersTracked = 4096
	// maxRPCsPerPod bounds the RPCs an authenticated pod has in flight: its
	// agent holds its Subscribe stream, at most 5 file downloads and a
	// report. Whoever controls a data plane's image holds its token; without
	// this bound its pod could hold 16 connections of 32 streams of 4 MiB.
	maxRPCsPerPod = 16
)

// refusalsNotLogged is the key of a refusal line that counts the refusals
// not logged since the line before (logsample).
const refusalsNotLogged = "refusalsNotLogged"

// gate admits and authenticates every RPC of the agent server.
type gate struct {
	auth     Authenticator
	screen   func(token string) error // nil when auth is no TokenScreener
	verdicts *verdicts
	log      logr.Logger
	observe  func(Event)
	// refusals logs refused RPCs; podRefusals those of tokens the API
	// server authenticated but whose pod is not the data plane, or that
	// come from elsewhere than the pod: any peer can flood the first kind,
	// only someone who may create pods or request tokens the second.
	refusals, podRefusals *logsample.Sampler
	now                   func() time.Time
	limits                limits
	// anyAddress accepts an identity from any peer address
	// (Options.AnyPeerAddress).
	anyAddress bool
	// conns tracks the connections of the listener served now, to mark
	// the ones that authenticate (conns.go).
	conns atomic.Pointer[connTracker]

	mu       sync.Mutex
	pending  int
	budgets  map[string]*rate.Limiter // review budget by peer address
	inflight map[types.NamespacedName]int
}

func newGate(auth Authenticator, log logr.Logger, observe func(Event), now func() time.Time) *gate {
	g := &gate{auth: auth, verdicts: newVerdicts(now), log: log, observe: observe,
		refusals: logsample.New(now, refusalsNotLogged), podRefusals: logsample.New(now, refusalsNotLogged),
		now: now, limits: defaultLimits(),
		budgets: make(map[string]*rate.Limiter), inflight: make(map[types.NamespacedName]int)}
	if s, ok := auth.(TokenScreener); ok {
		g.screen = s.ScreenToken
	}
	return g
}

// pendingReview is a stream the tap let through for a review; the review
// takes its place among maxPendingReviews until it ends or the stream does.
type pendingReview struct {
	token   string
	sum     [32]byte
	release func()
}

type pendingReviewKey struct{}

// tap is the server's grpc.InTapHandle. It must not block: it runs in the
// connection's reader, under the transport's lock.
func (g *gate) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	token, err := presentedToken(ctx, info.Header)
	if err == nil && g.screen != nil {
		if err = g.screen(token); err != nil {
			err = fmt.Errorf("token refused: %w", err)
		}
	}
	if err != nil {
		return nil, g.refuse(ctx, info.FullMethodName, err)
	}
	sum := sha256.Sum256([]byte(token))
	if id, refusal, ok := g.verdicts.get(sum); ok {
		if refusal != nil {
			return nil, g.refuse(ctx, info.FullMethodName, refusal)
		}
		return g.accepted(ctx, info.FullMethodName, id)
	}
	release, err := g.admitReview(peerHost(ctx))
	if err != nil {
		return nil, g.refuse(ctx, info.FullMethodName, err)
	}
	// The stream's context ends with the stream, also one that never
	// reaches a handler.
	context.AfterFunc(ctx, release)
	return context.WithValue(ctx, pendingReviewKey{}, &pendingReview{token: token, sum: sum, release: release}), nil
}

// admitReview takes a place for one review from host, or says why there is
// none. The returned release may be called any number of times.
func (g *gate) admitReview(host string) (release func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending >= g.limits.pendingReviews {
		return nil, &limitRefused{fmt.Errorf("%d agents are being authenticated already; retry", g.pending)}
	}
	now := g.now()
	budget := g.budgets[host]
	if budget == nil {
		g.makeRoomForBudget(now)
		budget = rate.NewLimiter(g.limits.reviewsPerSecondPerPeer, g.limits.reviewBurstPerPeer)
		g.budgets[host] = budget
	}
	if !budget.AllowN(now, 1) {
		return nil, &limitRefused{fmt.Errorf("too many new tokens from %s (at most %v a second); retry", host, float64(g.limits.reviewsPerSecondPerPeer))}
	}
	g.pending++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.pending--
			g.mu.Unlock()
		})
	}, nil
}

// makeRoomForBudget drops the budgets of peers that have not spent any
// lately, and all when every peer has (g.mu held).
func (g *gate) makeRoomForBudget(now time.Time) {
	if len(g.budgets) < maxPeersTracked {
		return
	}
	for host, b := range g.budgets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(g.budgets, host)
		}
	}
	if len(g.budgets) >= maxPeersTracked {
		clear(g.budgets)
	}
}

// authenticate returns ctx with the caller's identity: the one the tap
// found, or the one a review finds now. It runs before the request is read.
func (g *gate) authenticate(ctx context.Context, method string) (context.Context, error) {
	if _, ok := IdentityFrom(ctx); ok {
		return ctx, nil
	}
	p, ok := ctx.Value(pendingReviewKey{}).(*pendingReview)
	if !ok {
		// The tap admits every stream with an identity or a pending review.
		return nil, g.refuse(ctx, method, errors.New("the stream was not admitted by the server's tap"))
	}
	id, err := g.review(ctx, p)
	if err != nil {
		return nil, g.refuse(ctx, method, err)
	}
	return g.accepted(ctx, method, id)
}

// accepted returns ctx with the identity the token was accepted for, once
// the peer is found to be at one of the pod's addresses, and marks the
// connection authenticated (it leaves the pending connections).
func (g *gate) accepted(ctx context.Context, method string, id Identity) (context.Context, error) {
	if err := g.checkPeer(ctx, id); err != nil {
		return nil, g.refuse(ctx, method, err)
	}
	if t := g.conns.Load(); t != nil {
		t.authenticated(peerAddr(ctx))
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

// checkPeer refuses an identity presented from elsewhere than its pod.
// The check is not cached with the verdict: a token stolen from a pod is
// refused from another address however often it comes, and its refusal
// there does not refuse the pod.
func (g *gate) checkPeer(ctx context.Context, id Identity) error {
	if g.anyAddress {
		return nil
	}
	if id.Addresses.IsZero() {
		return &RetryLater{fmt.Errorf("pod %s has no address to check the connection's against yet", id.Pod)}
	}
	if ip := peerIP(ctx); !id.Addresses.Has(ip) {
		return &addressRefused{fmt.Errorf("the token of pod %s was presented from %s, which is not the pod's address (%s)", id.Pod, ip, id.Addresses)}
	}
	return nil
}

// limitRefused is a refusal by a bound of the agent port.
type limitRefused struct{ err error }

func (e *limitRefused) Error() string { return e.err.Error() }
func (e *limitRefused) Unwrap() error { return e.err }

// addressRefused is a pod's token presented from another address.
type addressRefused struct{ err error }

func (e *addressRefused) Error() string { return e.err.Error() }
func (e *addressRefused) Unwrap() error { return e.err }

// classify is the status code and reason of a refusal: one that may pass
// later is Unavailable (nginx-agent retries it), a bound's is
// ResourceExhausted, any other Unauthenticated (permanent for nginx-agent).
func classify(err error) (codes.Code, RefusalReason) {
	var (
		later   *RetryLater
		pod     *PodRefused
		address *addressRefused
		limit   *limitRefused
	)
	switch {
	case errors.As(err, &limit):
		return codes.ResourceExhausted, RefusedLimit
	case errors.As(err, &later):
		return codes.Unavailable, RefusedUnavailable
	case errors.As(err, &address):
		return codes.Unauthenticated, RefusedAddress
	case errors.As(err, &pod):
		return codes.Unauthenticated, RefusedPod
	}
	return codes.Unauthenticated, RefusedToken
}

// review asks the Authenticator about the token and caches its verdict.
func (g *gate) review(ctx context.Context, p *pendingReview) (Identity, error) {
	defer p.release()
	// Another stream may have had the same token reviewed meanwhile.
	if id, refusal, ok := g.verdicts.get(p.sum); ok {
		return id, refusal
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	id, err := g.auth.Authenticate(ctx, p.token)
	if err != nil {
		err = fmt.Errorf("token refused: %w", err)
		if later := (*RetryLater)(nil); !errors.As(err, &later) {
			g.verdicts.refuse(p.sum, err)
		}
		return Identity{}, err
	}
	g.verdicts.accept(p.sum, id)
	return id, nil
}

// refuse observes and logs (sampled) a refused RPC and returns its status.
func (g *gate) refuse(ctx context.Context, method string, err error) error {
	code, reason := classify(err)
	ev := Event{Type: EventRefused, Reason: reason, Message: err.Error()}
	var pod *PodRefused
	if errors.As(err, &pod) {
		ev.Key, ev.Pod = pod.Gateway, pod.Pod
	}
	g.observe(ev)
	resource := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get(mdUUID)) > 0 {
		resource = md.Get(mdUUID)[0] // the agent's resource (container) ID
	}
	kv := []any{"method", method, "peer", peerAddr(ctx), "resource", resource,
		"reason", err.Error(), "code", code.String(), "refusal", string(reason)}
	switch reason {
	case RefusedPod, RefusedAddress:
		if pod != nil {
			kv = append(kv, "pod", pod.Pod.String(), "gateway", pod.Gateway.String())
		}
		g.podRefusals.Info(g.log, "Refused a pod's token: not its Gateway's data plane, or not from the pod", kv...)
	default:
		g.refusals.Info(g.log, "Refused an agent", kv...)
	}
	return status.Error(code, err.Error())
}

type admittedKey struct{}

// admit authenticates the caller of an RPC and takes one of its pod's
// places (maxRPCsPerPod) until release is called, when the RPC ends. An RPC
// admitted already (by a unary method's wrapper, before the interceptor)
// takes no other place.
func (g *gate) admit(ctx context.Context, method string) (_ context.Context, release func(), _ error) {
	if ctx.Value(admittedKey{}) != nil {
		return ctx, func() {}, nil
	}
	ctx, err := g.authenticate(ctx, method)
	if err != nil {
		return nil, nil, err
	}
	id, _ := IdentityFrom(ctx)
	g.mu.Lock()
	n := g.inflight[id.Pod]
	if n >= g.limits.rpcsPerPod {
		g.mu.Unlock()
		return nil, nil, g.refuse(ctx, method, &limitRefused{fmt.Errorf("pod %s has %d RPCs in flight already; retry", id.Pod, n)})
	}
	g.inflight[id.Pod] = n + 1
	g.mu.Unlock()
	var once sync.Once
	return context.WithValue(ctx, admittedKey{}, true), func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.inflight[id.Pod]--; g.inflight[id.Pod] <= 0 {
				delete(g.inflight, id.Pod)
			}
		})
	}, nil
}

func (g *gate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, release, err := g.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	defer release()
	return handler(ctx, req)
}

func (g *gate) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, release, err := g.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	defer release()
	return handler(srv, &identifiedStream{ServerStream: ss, ctx: ctx})
}

// identifiedStream carries the identity in its context.
type identifiedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identifiedStream) Context() context.Context { return s.ctx }

// authenticatingRegistrar registers services on a grpc.Server so that each
// unary method authenticates its caller before its request is read: grpc-go
// decodes a unary request before any interceptor runs, but after the
// method's handler is called. Register every service through it.
type authenticatingRegistrar struct {
	server grpc.ServiceRegistrar
	gate   *gate
}

func (r authenticatingRegistrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		handler, method := m.Handler, "/"+desc.ServiceName+"/"+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			ctx, release, err := r.gate.admit(ctx, method)
			if err != nil {
				return nil, err
			}
			defer release()
			return handler(srv, ctx, dec, ic)
		}
		d.Methods[i] = m
	}
	r.server.RegisterService(&d, impl)
}
