package agent

import (
	"context"
	"errors"
	"io"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stream is one agent's Subscribe stream: the only way to send it requests.
type stream struct {
	pod      *pod
	kick     chan struct{} // capacity 1: "look whether something is due"
	replaced chan struct{} // closed when a newer stream of the pod took over
}

func newStream(p *pod) *stream {
	return &stream{pod: p, kick: make(chan struct{}, 1), replaced: make(chan struct{})}
}

// subscribe serves one Subscribe stream until the agent, the Server or a
// newer stream of the same pod ends it. serving is done when Serve stops.
func (s *Server) subscribe(serving context.Context, srv grpc.BidiStreamingServer[mpi.DataPlaneResponse, mpi.ManagementPlaneRequest]) error {
	ctx := srv.Context()
	id, ok := IdentityFrom(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "no identity") // the interceptor always sets one
	}
	st, err := s.attach(id)
	if err != nil {
		return err
	}
	defer s.detach(st)
	log := s.log.WithValues("pod", id.Pod, "gateway", id.Gateway)
	log.Info("Agent subscribed")

	recvErr := make(chan error, 1)
	go func() { recvErr <- s.receive(srv, id) }()

	for {
		select {
		case <-ctx.Done():
			log.Info("Agent stream ended", "reason", context.Cause(ctx))
			return status.FromContextError(ctx.Err()).Err()
		case <-serving.Done():
			return status.Error(codes.Unavailable, "control plane is shutting down; reconnect")
		case <-st.replaced:
			log.Info("Agent stream replaced by a newer one")
			return status.Error(codes.Aborted, "replaced by a newer Subscribe stream of the same pod")
		case err := <-recvErr:
			if err != nil {
				log.Info("Agent stream broken", "error", err.Error())
			}
			return err
		case <-st.kick:
			req, psh := s.takePush(st)
			if req == nil {
				continue
			}
			v := psh.version.id
			if err := srv.Send(req); err != nil {
				s.unsent(st.pod, psh)
				log.Info("Sending a push failed", "version", v, "error", err.Error())
				return err
			}
			log.Info("Configuration pushed", "version", v, "correlationID", psh.correlationID)
			s.observe(Event{Type: EventPushSent, Key: id.Gateway, Pod: id.Pod, Version: v})
		}
	}
}

// receive reads the agent's DataPlaneResponses until the stream ends.
func (s *Server) receive(srv grpc.BidiStreamingServer[mpi.DataPlaneResponse, mpi.ManagementPlaneRequest], id Identity) error {
	for {
		r, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch r.GetRequestType() {
		case mpi.DataPlaneResponse_CONFIG_APPLY_REQUEST, mpi.DataPlaneResponse_UNSPECIFIED_REQUEST:
			if ev := s.finish(id.Pod, r); ev != nil {
				s.observe(*ev)
			}
		default:
			s.log.V(2).Info("Agent response", "pod", id.Pod, "type", r.GetRequestType(),
				"status", r.GetCommandResponse().GetStatus())
		}
	}
}
