package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"k8s.io/apimachinery/pkg/types"
)

// Identity is who an authenticated agent is.
type Identity struct {
	// Pod is the data-plane pod the agent runs in.
	Pod types.NamespacedName
	// Gateway is the Gateway whose data plane the pod is.
	Gateway Key
	// Addresses are the pod's own: unless Options.AnyPeerAddress, the
	// Server accepts the identity only from a peer at one of them, so that
	// a token requested for the pod is of no use elsewhere.
	Addresses PodAddresses
}

// PodAddresses are a pod's IP addresses: Kubernetes gives a pod at most one
// of each family.
type PodAddresses struct {
	IPv4, IPv6 netip.Addr
}

// ParsePodAddresses reads a pod's addresses (status.podIPs); it fails on
// an address that does not parse or a second one of a family.
func ParsePodAddresses(ips ...string) (PodAddresses, error) {
	var out PodAddresses
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return PodAddresses{}, fmt.Errorf("pod IP %q: %w", s, err)
		}
		a = a.Unmap()
		slot := &out.IPv6
		if a.Is4() {
			slot = &out.IPv4
		}
		if slot.IsValid() {
			return PodAddresses{}, fmt.Errorf("pod IPs %q: two of one family", ips)
		}
		*slot = a
	}
	return out, nil
}

// IsZero says there is no address.
func (p PodAddresses) IsZero() bool { return !p.IPv4.IsValid() && !p.IPv6.IsValid() }

// Has says whether a is one of the addresses.
func (p PodAddresses) Has(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && (a == p.IPv4 || a == p.IPv6)
}

func (p PodAddresses) String() string {
	var s []string
	for _, a := range []netip.Addr{p.IPv4, p.IPv6} {
		if a.IsValid() {
			s = append(s, a.String())
		}
	}
	return strings.Join(s, ", ")
}

// RetryLater marks an authentication failure that may pass on a later try:
// the API server could not answer, or the pod's Gateway could not be read.
// The agent is told Unavailable, which nginx-agent retries with back-off.
// Every other refusal is Unauthenticated, which nginx-agent takes as
// permanent (it does not try to connect again until something about its
// instance changes): a condition that passes by itself must never be
// refused that way.
type RetryLater struct{ Err error }

func (e *RetryLater) Error() string { return e.Err.Error() }
func (e *RetryLater) Unwrap() error { return e.Err }

// PodRefused is an Authenticator's refusal of a token the API server
// authenticated, bound to a pod that is not a data-plane pod of the
// Gateway its label names (another ServiceAccount, a spec Gatewall did not
// render for that Gateway, a finished pod). The Server logs these apart
// from refusals of bad tokens, which any peer can send in a flood: they
// say that someone who may create pods in the namespace tried to pass for
// a data plane, or that something changed a data-plane pod.
type PodRefused struct {
	Pod     types.NamespacedName
	Gateway Key // "" when the pod names none
	Err     error
}

func (e *PodRefused) Error() string { return e.Err.Error() }
func (e *PodRefused) Unwrap() error { return e.Err }

// RefusalReason classifies a refused RPC or connection (Event.Reason).
type RefusalReason string

const (
	// RefusedToken: no TLS 1.3, no token, or one the API server does not
	// authenticate for the agents' audience or that is not a pod's.
	RefusedToken RefusalReason = "token"
	// RefusedPod: a PodRefused.
	RefusedPod RefusalReason = "pod"
	// RefusedAddress: a pod's token presented from an address that is not
	// the pod's.
	RefusedAddress RefusalReason = "address"
	// RefusedLabels: an agent whose configured labels name another
	// Gateway than its pod serves.
	RefusedLabels RefusalReason = "labels"
	// RefusedLimit: a bound of the agent port (reviews, RPCs per pod).
	RefusedLimit RefusalReason = "limit"
	// RefusedUnavailable: a RetryLater (the API server could not answer,
	// the pod has no address yet).
	RefusedUnavailable RefusalReason = "unavailable"
)

// Authenticator checks an agent's bearer token. The Server caches its
// verdicts: an acceptance for 30 s, a refusal (other than RetryLater) for
// 5 s.
type Authenticator interface {
	// Authenticate returns who presents token, or an error saying why the
	// token is refused.
	Authenticate(ctx context.Context, token string) (Identity, error)
}

// TokenScreener is an Authenticator that can also refuse, from the token
// alone, tokens it would never accept: the Server asks it before a stream
// is created, so ScreenToken must be quick and do no I/O.
type TokenScreener interface {
	// ScreenToken returns why token cannot pass Authenticate, or nil when
	// only Authenticate can tell.
	ScreenToken(token string) error
}

// The gRPC metadata keys nginx-agent sends with every RPC.
const (
	mdAuthorization = "authorization"
	mdUUID          = "uuid"
)

// maxTokenBytes bounds the token the Server takes from an RPC's metadata: a
// bound ServiceAccount token is about 1 KiB (a JWT with the pod's names).
const maxTokenBytes = 8 << 10

type identityKey struct{}

// IdentityFrom returns who the peer of an authenticated request is; the
// services registered with Options.Services use it too.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// presentedToken checks the transport of an RPC and returns the token it
// presents, or why it presents none the Server would review.
func presentedToken(ctx context.Context, md metadata.MD) (string, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", errors.New("no peer information")
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || info.State.Version < tls.VersionTLS13 {
		return "", errors.New("TLS 1.3 is required")
	}
	token := ""
	if vals := md.Get(mdAuthorization); len(vals) > 0 {
		token = strings.TrimSpace(vals[0])
		// nginx-agent sends the bare token; accept the usual scheme as well.
		if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
			token = strings.TrimSpace(token[7:])
		}
	}
	switch {
	case token == "":
		return "", errors.New("no token: the agent must send its ServiceAccount token (command.auth.tokenpath)")
	case len(token) > maxTokenBytes:
		return "", fmt.Errorf("token refused: %d bytes, longer than any ServiceAccount token (%d)", len(token), maxTokenBytes)
	case strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }):
		return "", errors.New("token refused: it holds spaces, control or non-ASCII characters")
	}
	return token, nil
}

// peerAddr is the address of the RPC's peer, "" if unknown.
func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// peerHost is the host (IP address) of the RPC's peer, "" if unknown.
func peerHost(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return hostOf(p.Addr)
	}
	return ""
}

// peerIP is the IP address of the RPC's peer (invalid if unknown).
func peerIP(ctx context.Context) netip.Addr {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
			return ap.Addr().Unmap()
		}
	}
	return netip.Addr{}
}

// hostOf is the host part of addr: the IP address of a TCP peer.
func hostOf(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		return host
	}
	return addr.String()
}
