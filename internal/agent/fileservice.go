package agent

import (
	"bytes"
	"cmp"
	"context"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
	"github.com/nginx/agent/v3/pkg/id"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// chunkSize is the size of GetFileStream chunks: the agent's own default
// (client.grpc.file_chunk_size), well under gRPC's 4 MiB message limit.
const chunkSize = 512 << 10

// fileService is mpi.v1 FileService. Agents only download: every file comes
// from a version retained for the Gateway the agent is authenticated for.
type fileService struct {
	mpi.UnimplementedFileServiceServer
	s *Server
}

// GetOverview returns the overview of a retained version.
func (f *fileService) GetOverview(ctx context.Context, req *mpi.GetOverviewRequest) (*mpi.GetOverviewResponse, error) {
	id, _ := IdentityFrom(ctx)
	v := f.s.retainedVersion(id.Gateway, req.GetConfigVersion().GetVersion())
	if v == nil {
		return nil, status.Errorf(codes.NotFound, "version %q of Gateway %s is not known", req.GetConfigVersion().GetVersion(), id.Gateway)
	}
	return &mpi.GetOverviewResponse{Overview: v.overview(req.GetConfigVersion().GetInstanceId(), defaultConfigPath)}, nil
}

// UpdateOverview takes note that the agent reported its files. The empty
// answer asks for no upload: the control plane is the source of truth.
func (f *fileService) UpdateOverview(ctx context.Context, req *mpi.UpdateOverviewRequest) (*mpi.UpdateOverviewResponse, error) {
	id, _ := IdentityFrom(ctx)
	f.s.log.V(1).Info("Agent reported its files", "pod", id.Pod, "files", len(req.GetOverview().GetFiles()),
		"version", req.GetOverview().GetConfigVersion().GetVersion())
	f.s.overviewReported(id, req.GetOverview().GetFiles())
	return &mpi.UpdateOverviewResponse{}, nil
}

// GetFile returns one file of a retained version.
func (f *fileService) GetFile(ctx context.Context, req *mpi.GetFileRequest) (*mpi.GetFileResponse, error) {
	id, _ := IdentityFrom(ctx)
	data, err := f.s.serveFile(id, req.GetFileMeta())
	if err != nil {
		return nil, err
	}
	return &mpi.GetFileResponse{Contents: &mpi.FileContents{Contents: data}}, nil
}

// GetFileStream returns one file of a retained version in chunks.
func (f *fileService) GetFileStream(req *mpi.GetFileRequest, srv grpc.ServerStreamingServer[mpi.FileDataChunk]) error {
	who, _ := IdentityFrom(srv.Context())
	data, err := f.s.serveFile(who, req.GetFileMeta())
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return status.Errorf(codes.FailedPrecondition, "file %s is empty: use GetFile", req.GetFileMeta().GetName())
	}
	meta := &mpi.FileMeta{
		Name:        req.GetFileMeta().GetName(),
		Hash:        req.GetFileMeta().GetHash(),
		Permissions: req.GetFileMeta().GetPermissions(),
		Size:        int64(len(data)),
	}
	header := mpi.FileDataChunk_Header{Header: &mpi.FileDataChunkHeader{
		FileMeta:  meta,
		Chunks:    uint32((len(data) + chunkSize - 1) / chunkSize),
		ChunkSize: chunkSize,
	}}
	mm := &mpi.MessageMeta{
		MessageId:     id.GenerateMessageID(),
		CorrelationId: cmp.Or(req.GetMessageMeta().GetCorrelationId(), id.GenerateMessageID()),
		Timestamp:     timestamppb.Now(),
	}
	if err := files.SendChunkedFile(mm, header, bytes.NewReader(data), srv); err != nil {
		return status.Errorf(codes.Unavailable, "streaming %s: %v", meta.GetName(), err)
	}
	return nil
}

// UpdateFile is refused: Gatewall does not take files from data planes.
func (f *fileService) UpdateFile(context.Context, *mpi.UpdateFileRequest) (*mpi.UpdateFileResponse, error) {
	return nil, status.Error(codes.Unimplemented, "Gatewall does not accept files from data planes: the control plane is the source of truth")
}

// UpdateFileStream is refused like UpdateFile.
func (f *fileService) UpdateFileStream(grpc.ClientStreamingServer[mpi.FileDataChunk, mpi.UpdateFileResponse]) error {
	return status.Error(codes.Unimplemented, "Gatewall does not accept files from data planes: the control plane is the source of truth")
}

// serveFile finds the file an agent asks for among its Gateway's retained
// versions and reports the event.
func (s *Server) serveFile(id Identity, meta *mpi.FileMeta) ([]byte, error) {
	name := meta.GetName()
	data, ok := s.file(id.Gateway, name, meta.GetHash())
	if !ok {
		s.log.Info("Agent asked for a file no retained version holds", "pod", id.Pod, "gateway", id.Gateway,
			"file", name, "hash", meta.GetHash())
		s.observe(Event{Type: EventFileNotFound, Key: id.Gateway, Pod: id.Pod, Path: name})
		return nil, status.Errorf(codes.NotFound, "file %s with hash %s is not part of any configuration of Gateway %s",
			name, meta.GetHash(), id.Gateway)
	}
	s.observe(Event{Type: EventFileServed, Key: id.Gateway, Pod: id.Pod, Path: name})
	return data, nil
}
