package agent

import (
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// What one peer of the agent port may hold. Agents are authenticated
// before their requests are read (gate.go); these bound the rest.
const (
	// maxRecvMsgSize bounds one message from an authenticated agent. It is
	// what nginx-agent itself can send (its client.grpc.max_message_send_size
	// default, which Gatewall's nginx-agent.conf keeps), so no legitimate
	// message is refused. The largest an agent sends is its UpdateOverview,
	// about 590 bytes per certificate file (with four names) and 100 per
	// other file (measured with the agent's own pkg/files:
	// TestAgentMessagesFitTheReceiveLimit): 2.8 MiB, 71% of the limit, for
	// a Gateway with 5,000 certificates; past about 7,000 the agent cannot
	// send it at all. Other reports are a few KiB; a DataPlaneResponse with
	// nginx -t failing on all 64 server shards 124 KiB.
	maxRecvMsgSize = 4 << 20
	// maxStreamsPerConnection: nginx-agent holds its Subscribe stream and at
	// most 5 file downloads (client.grpc.max_parallel_file_operations) and a
	// report at a time.
	maxStreamsPerConnection = 32
	// maxHeaderListSize bounds an RPC's metadata, which is read before the
	// tap (the default is 16 MiB); an agent sends a token of about 1 KiB.
	maxHeaderListSize = 16 << 10
	// streamWindow is what a peer may send on a stream before the server
	// reads it (and the connection's window): the minimum HTTP/2 window,
	// fixed, so that a stream waiting for its review holds little.
	// Agents upload nothing; their downloads use the agent's window.
	streamWindow = 64 << 10
	// handshakeTimeout bounds a new connection's TLS and HTTP/2 handshakes:
	// a peer that never completes them is closed.
	handshakeTimeout = 10 * time.Second
	// maxIdleConnection closes connections without a stream this long: an
	// agent always keeps its Subscribe stream open.
	maxIdleConnection = 2 * time.Minute
	// maxConnections and maxConnectionsPerPeer bound the connections open
	// at once, by peer address (a pod's IP: its agent's and its endpoints
	// client's connections, and a few more while they replace them); the
	// rest are closed as soon as accepted, before any handshake, unless a
	// connection that has not authenticated yet makes room (conns.go).
	maxConnections        = 4096
	maxConnectionsPerPeer = 16
	// Of those, at most maxPreAuthConnections, and maxPreAuthPerPeer from
	// one address, may be connections none of whose RPCs has authenticated
	// yet: a new connection beyond either bound closes the oldest such
	// connection of the address that holds the most, so that peers which
	// complete the TLS handshake and never authenticate cannot hold the
	// places that agents need (they are 256 addresses at 16 connections
	// each otherwise). A pod's two clients authenticate with their first
	// RPC, within a second of connecting when the API server answers.
	maxPreAuthConnections = 1024
	maxPreAuthPerPeer     = 8
	// preAuthDeadline closes a connection that has not authenticated this
	// long after it was accepted (the handshake's and a review's timeouts,
	// and room to spare): the idle timeout never ends a peer that keeps
	// sending RPCs it is refused. A client refused for a while (the API
	// server down) connects again when it retries.
	preAuthDeadline = 30 * time.Second
)

// limits are the bounds that tests lower: what one peer, and all, may hold
// of connections and reviews.
type limits struct {
	connections, connectionsPerPeer  int
	preAuth, preAuthPerPeer          int
	handshake, idle, preAuthDeadline time.Duration
	pendingReviews                   int
	reviewsPerSecondPerPeer          rate.Limit
	reviewBurstPerPeer               int
	rpcsPerPod                       int
}

func defaultLimits() limits {
	return limits{
		handshake:               handshakeTimeout,
		idle:                    maxIdleConnection,
		connections:             maxConnections,
		connectionsPerPeer:      maxConnectionsPerPeer,
		preAuth:                 maxPreAuthConnections,
		preAuthPerPeer:          maxPreAuthPerPeer,
		preAuthDeadline:         preAuthDeadline,
		pendingReviews:          maxPendingReviews,
		reviewsPerSecondPerPeer: reviewsPerSecondPerPeer,
		reviewBurstPerPeer:      reviewBurstPerPeer,
		rpcsPerPod:              maxRPCsPerPod,
	}
}

// serverKeepAliveMinTime is the shortest interval between an agent's pings
// the server accepts; a client that pings more often is disconnected.
const serverKeepAliveMinTime = 10 * time.Second

// serverOptions are the agent server's gRPC options: its credentials, the
// gate and the limits above.
func serverOptions(creds credentials.TransportCredentials, g *gate) []grpc.ServerOption {
	lim := g.limits
	return []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.InTapHandle(g.tap),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
		grpc.MaxRecvMsgSize(maxRecvMsgSize),
		grpc.MaxConcurrentStreams(maxStreamsPerConnection),
		grpc.MaxHeaderListSize(maxHeaderListSize),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(streamWindow),
		grpc.ConnectionTimeout(lim.handshake),
		// nginx-agent pings every agentKeepAliveTime, also without streams.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: serverKeepAliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time: 30 * time.Second, Timeout: 10 * time.Second, MaxConnectionIdle: lim.idle,
		}),
	}
}
