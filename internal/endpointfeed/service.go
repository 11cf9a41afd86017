package endpointfeed

import (
	"encoding/json"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// Codec is the content subtype of the service's messages: JSON.
const Codec = "gatewall-json"

// jsonCodec encodes the service's messages as JSON.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return Codec }

// The codec is registered with gRPC (its registry of content subtypes is
// global) so that the server decodes the clients' requests with it.
func init() { encoding.RegisterCodec(jsonCodec{}) }

// The service's names.
const (
	ServiceName = "gatewall.endpoints.v1.Endpoints"
	watchMethod = "Watch"
	// WatchMethod is the full name of the one method, as interceptors see it.
	WatchMethod = "/" + ServiceName + "/" + watchMethod
)

// watcher is what the service's handler calls.
type watcher interface {
	watch(stream grpc.ServerStream) error
}

// serviceDesc describes the service: one bidirectional stream, the server
// sending Updates and the client Acks.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*watcher)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    watchMethod,
		ServerStreams: true,
		ClientStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			return srv.(watcher).watch(stream)
		},
	}},
}

// Register registers s on a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { r.RegisterService(&serviceDesc, s) }
