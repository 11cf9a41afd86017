// Package endpoints is the data of dynamic endpoints: the endpoints of each
// of a Gateway's http upstreams, which reach its data-plane pods apart from
// the NGINX configuration, so that a change that only moves a Service's
// endpoints (a rollout, scaling, a crash, readiness flapping) needs no
// NGINX reload.
//
// The configuration (nginx/config) names each upstream by an ID and lists
// no endpoints; the translation yields a Set of them; the manager streams
// each pod the Updates that take it from what it has to the Gateway's
// newest Set (package endpointfeed); the pod's endpoints client hands them
// to NGINX's Lua balancer. What a Gateway's data plane holds is bounded
// (bounds.go); the data plane applies each upstream of an update alone.
//
// An upstream's endpoints may also be DNS names with a port (names.go),
// which the pod's endpoints client resolves, with the Gateway's Resolver:
// NGINX is handed only the addresses they answer. Every address the data
// plane connects to, an EndpointSlice's or a DNS answer, passes one check
// (Address, address.go).
//
// Updates also carry the remote key sets of JWT filters (KeySources,
// keysources.go), which the pod's endpoints client fetches; acknowledgements
// name those it cannot.
//
// It is pure: values and functions on them, no I/O.
package endpoints
