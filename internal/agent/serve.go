package agent

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/gatewall/gatewall/internal/logsample"
)

// gracefulStopTimeout bounds waiting for running RPCs (file downloads)
// when Serve stops.
const gracefulStopTimeout = 5 * time.Second

// Serve serves the agents on l until ctx is done, then stops gracefully:
// Subscribe streams are ended (the agents reconnect to whichever control
// plane serves next) and running RPCs get a few seconds to finish. The
// Server's state outlives Serve, so Serve may be called again.
//
// Every service is registered through an authenticatingRegistrar and
// every connection is tracked by a connTracker (see gate.go, limits.go and
// conns.go).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	serving, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	creds := &loggingCreds{TransportCredentials: credentials.NewTLS(s.tls), log: s.log, sampler: logsample.New(s.now, refusalsNotLogged)}
	gs := grpc.NewServer(serverOptions(creds, s.gate)...)
	services := authenticatingRegistrar{server: gs, gate: s.gate}
	mpi.RegisterCommandServiceServer(services, &commandService{s: s, serving: serving})
	mpi.RegisterFileServiceServer(services, &fileService{s: s})
	if s.services != nil {
		s.services(services)
	}
	conns := newConnTracker(s.gate.limits, s.log, s.now)
	s.gate.conns.Store(conns)
	l = conns.listener(l)

	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(l) }()
	s.log.Info("Serving nginx agents", "address", l.Addr().String())

	select {
	case err := <-errc:
		return fmt.Errorf("serving nginx agents on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	stopStreams()
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(gracefulStopTimeout):
		gs.Stop()
		<-stopped
	}
	if err := <-errc; err != nil {
		// Stopped: gRPC's Serve returns nil, or the listener's error when
		// it closed first; neither is a failure of the manager's.
		s.log.V(1).Info("Serving nginx agents ended", "error", err.Error())
	}
	s.log.Info("Stopped serving nginx agents", "address", l.Addr().String())
	return nil
}

// loggingCreds logs refused TLS handshakes (plaintext or old TLS clients),
// which never reach an RPC to be answered with a status, sampled.
type loggingCreds struct {
	credentials.TransportCredentials
	log     logr.Logger
	sampler *logsample.Sampler
}

func (c *loggingCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.sampler.Info(c.log, "Refused a connection: TLS handshake failed", "peer", conn.RemoteAddr().String(), "reason", err.Error())
	}
	return out, info, err
}

func (c *loggingCreds) Clone() credentials.TransportCredentials {
	return &loggingCreds{TransportCredentials: c.TransportCredentials.Clone(), log: c.log, sampler: c.sampler}
}
