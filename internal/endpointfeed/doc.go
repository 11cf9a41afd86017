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
// Endpoints may be DNS names (an ExternalName Service, FQDN
// EndpointSlices): the server sends them as they are, with the Gateway's
// resolver (its NginxProxy's dnsResolver), and the client resolves them in
// the background (names.go, with its own small DNS client: dnsclient.go),
// honouring the answers' TTLs within bounds, and hands NGINX the addresses
// they answer, checked by endpoints.Address as an EndpointSlice's are:
// NGINX never sees a name. New answers reach NGINX as the answers change,
// without a new version; a name that stops resolving keeps its last
// answers a while (endpoints.StaleFor), then its upstream loses them. The
// client says which upstreams' names do not resolve in every
// acknowledgement, and, when that changes, in a report (the last version
// acknowledged, again); a name that does not resolve is the Service's
// doing, not the data plane's: the pod stays current.
//
// The same stream carries the remote key sets of the Gateway's JWT
// filters (endpoints.KeySources): the client fetches each in the
// background (keysets.go: https only, to addresses endpoints.Address
// allows, bounded in time and size, checked by jwks.Parse), hands NGINX
// the sets on the same control socket, fetches them again every refresh,
// keeps a set whose server fails, and names the sets that fail in its
// acknowledgements. No request ever waits for a fetch.
//
// A pod that loses the manager keeps serving its last endpoints (and key
// sets); the client keeps them in state files that a restarted NGINX
// loads, and on reconnecting receives the whole set again.
//
// Messages are JSON (the codec Codec names), so that the protocol needs no
// generated code: an Update from the server, an Ack from the client.
package endpointfeed
