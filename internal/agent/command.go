package agent

import (
	"context"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// commandService is mpi.v1 CommandService for one Serve call.
type commandService struct {
	mpi.UnimplementedCommandServiceServer
	s       *Server
	serving context.Context // done when Serve stops
}

// CreateConnection accepts an agent whose labels name the Gateway its pod
// serves. The response carries no agent configuration: the agent keeps the
// one the provisioner gave it.
func (c *commandService) CreateConnection(ctx context.Context, req *mpi.CreateConnectionRequest) (*mpi.CreateConnectionResponse, error) {
	id, _ := IdentityFrom(ctx)
	if err := c.s.checkIdentity(id, req.GetResource()); err != nil {
		return nil, err
	}
	c.s.connect(id, req.GetResource())
	return &mpi.CreateConnectionResponse{Response: &mpi.CommandResponse{
		Status:  mpi.CommandResponse_COMMAND_STATUS_OK,
		Message: "connected to Gatewall",
	}}, nil
}

// UpdateDataPlaneStatus records the agent's instances (NGINX found,
// restarted or gone).
func (c *commandService) UpdateDataPlaneStatus(ctx context.Context, req *mpi.UpdateDataPlaneStatusRequest) (*mpi.UpdateDataPlaneStatusResponse, error) {
	id, _ := IdentityFrom(ctx)
	if err := c.s.checkIdentity(id, req.GetResource()); err != nil {
		return nil, err
	}
	c.s.connect(id, req.GetResource())
	return &mpi.UpdateDataPlaneStatusResponse{}, nil
}

// UpdateDataPlaneHealth is acknowledged; Gatewall reads health from the
// pods' readiness, not from the agent.
func (c *commandService) UpdateDataPlaneHealth(ctx context.Context, req *mpi.UpdateDataPlaneHealthRequest) (*mpi.UpdateDataPlaneHealthResponse, error) {
	id, _ := IdentityFrom(ctx)
	for _, h := range req.GetInstanceHealths() {
		if h.GetInstanceHealthStatus() != mpi.InstanceHealth_INSTANCE_HEALTH_STATUS_HEALTHY {
			c.s.log.V(1).Info("Instance not healthy", "pod", id.Pod, "instance", h.GetInstanceId(),
				"status", h.GetInstanceHealthStatus(), "description", h.GetDescription())
		}
	}
	return &mpi.UpdateDataPlaneHealthResponse{}, nil
}

// Subscribe is the stream pushes are sent on.
func (c *commandService) Subscribe(srv grpc.BidiStreamingServer[mpi.DataPlaneResponse, mpi.ManagementPlaneRequest]) error {
	return c.s.subscribe(c.serving, srv)
}

// checkIdentity refuses an agent whose labels name another Gateway than the
// one its authenticated pod serves.
func (s *Server) checkIdentity(id Identity, res *mpi.Resource) error {
	if err := checkLabels(res, id.Gateway); err != nil {
		s.gate.podRefusals.Info(s.log, "Refused an agent", "pod", id.Pod, "gateway", id.Gateway, "reason", err.Error(),
			"refusal", string(RefusedLabels))
		s.observe(Event{Type: EventRefused, Key: id.Gateway, Pod: id.Pod, Reason: RefusedLabels, Message: err.Error()})
		return status.Error(codes.PermissionDenied, err.Error())
	}
	return nil
}
