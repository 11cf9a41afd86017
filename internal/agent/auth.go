package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
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

// Authenticator checks an agent's bearer token.
type Authenticator interface {
	// Authenticate returns who presents token, or an error saying why the
	// token is refused.
	Authenticate(ctx context.Context, token string) (Identity, error)
}

// The gRPC metadata keys nginx-agent sends with every RPC.
const (
	mdAuthorization = "authorization"
	mdUUID          = "uuid"
)

type identityKey struct{}

// IdentityFrom returns who the peer of an authenticated request is; the
// services registered with Options.Services use it too.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// authenticate checks the transport and the token of one RPC.
func (s *Server) authenticate(ctx context.Context, method string) (context.Context, error) {
	id, err := s.identify(ctx)
	if err != nil {
		addr, resource := "", ""
		if p, ok := peer.FromContext(ctx); ok {
			addr = p.Addr.String()
		}
		if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get(mdUUID)) > 0 {
			resource = md.Get(mdUUID)[0] // the agent's resource (container) ID
		}
		code := codes.Unauthenticated
		if later := (*RetryLater)(nil); errors.As(err, &later) {
			code = codes.Unavailable
		}
		s.log.Info("Refused an agent", "method", method, "peer", addr, "resource", resource, "reason", err.Error(), "code", code.String())
		s.observe(Event{Type: EventRefused, Message: err.Error()})
		return nil, status.Error(code, err.Error())
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

func (s *Server) identify(ctx context.Context) (Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}, errors.New("no peer information")
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || info.State.Version < tls.VersionTLS13 {
		return Identity{}, errors.New("TLS 1.3 is required")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	token := ""
	if vals := md.Get(mdAuthorization); len(vals) > 0 {
		token = strings.TrimSpace(vals[0])
		// nginx-agent sends the bare token; accept the usual scheme as well.
		if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
			token = strings.TrimSpace(token[7:])
		}
	}
	if token == "" {
		return Identity{}, errors.New("no token: the agent must send its ServiceAccount token (command.auth.tokenpath)")
	}
	id, err := s.auth.Authenticate(ctx, token)
	if err != nil {
		return Identity{}, fmt.Errorf("token refused: %w", err)
	}
	return id, nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := s.authenticate(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := s.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return handler(srv, &identifiedStream{ServerStream: ss, ctx: ctx})
}

// identifiedStream carries the identity in its context.
type identifiedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identifiedStream) Context() context.Context { return s.ctx }
