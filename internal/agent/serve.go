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
	"google.golang.org/grpc/keepalive"
)

const (
	// gracefulStopTimeout bounds waiting for running RPCs (file downloads)
	// when Serve stops.
	gracefulStopTimeout = 5 * time.Second
	// maxRecvMsgSize bounds what an agent may send; agents only send small
	// reports (overviews list file metadata, not contents).
	maxRecvMsgSize = 16 << 20
)

// serverKeepAliveMinTime is the shortest interval between an agent's pings
// the server accepts; a client that pings more often is disconnected.
const serverKeepAliveMinTime = 10 * time.Second

// Serve serves the agents on l until ctx is done, then stops gracefully:
// Subscribe streams are ended (the agents reconnect to whichever control
// plane serves next) and running RPCs get a few seconds to finish. The
// Server's state outlives Serve, so Serve may be called again.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	serving, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	gs := grpc.NewServer(
		grpc.Creds(&loggingCreds{TransportCredentials: credentials.NewTLS(s.tls), log: s.log}),
		grpc.ChainUnaryInterceptor(s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamAuth),
		// nginx-agent pings every agentKeepAliveTime, also without streams.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: serverKeepAliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.MaxRecvMsgSize(maxRecvMsgSize),
	)
	mpi.RegisterCommandServiceServer(gs, &commandService{s: s, serving: serving})
	mpi.RegisterFileServiceServer(gs, &fileService{s: s})
	if s.services != nil {
		s.services(gs)
	}

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
	<-errc
	s.log.Info("Stopped serving nginx agents", "address", l.Addr().String())
	return nil
}

// loggingCreds logs refused TLS handshakes (plaintext or old TLS clients),
// which never reach an RPC to be answered with a status.
type loggingCreds struct {
	credentials.TransportCredentials
	log logr.Logger
}

func (c *loggingCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.log.Info("Refused a connection: TLS handshake failed", "peer", conn.RemoteAddr().String(), "reason", err.Error())
	}
	return out, info, err
}

func (c *loggingCreds) Clone() credentials.TransportCredentials {
	return &loggingCreds{TransportCredentials: c.TransportCredentials.Clone(), log: c.log}
}
