package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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
