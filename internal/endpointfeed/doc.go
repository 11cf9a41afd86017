// Package endpointfeed carries dynamic endpoints (package endpoints) from
// the manager to each data-plane pod, apart from the NGINX configuration
// that nginx-agent applies.
//
// The manager's Server is a gRPC service registered on the agent server,
// so it is reached on the same port, over the same TLS, and authenticated
// the same way (the pod's bound ServiceAccount token); it serves no one
// the agent server would refuse. Each pod's endpoints client
// (cmd/gatewall-endpoints, Run here) opens one Watch stream; the server
// sends it its Gateway's whole set of endpoints, then, as the set changes,
// only what changed, coalescing versions a slow pod has not taken yet; the
// client hands each update to NGINX's Lua (Applier) and acknowledges it,
// naming the upstreams NGINX could not apply (they keep what they had).
// The server knows, per pod, which version it holds and which upstreams
// it refused, for metrics and statuses; it sends a refused upstream again
// only when it changes. What a pod says is bounded: the error of a refused
// update is kept, reported and logged cut to 1 KiB, and what a pod's
// acknowledgements log is sampled per pod (package logsample).
//
// A pod that loses the manager keeps serving its last endpoints; the
// client keeps them in a state file that a restarted NGINX loads, and on
// reconnecting receives the whole set again.
//
// Messages are JSON (the codec Codec names), so that the protocol needs no
// generated code: an Update from the server, an Ack from the client.
package endpointfeed
