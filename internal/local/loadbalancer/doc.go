// Package loadbalancer plays the cloud load balancer for a local cluster:
// each Service of type LoadBalancer gets its own loopback address
// (127.0.1.N by default; the host routes all of 127.0.0.0/8 to lo), written to
// status.loadBalancer.ingress, and a userspace TCP proxy per port on that
// address that forwards round-robin to the Service's ready endpoints, read
// from its EndpointSlices and followed as they change. Distinct addresses let
// several Services (one per Gateway) listen on the same ports.
//
// A Service annotated with ProxyProtocolAnnotation ("v1" or "v2") has each
// TCP connection to its endpoints opened with a PROXY protocol header naming
// the client's address, as a cloud load balancer told to send the PROXY
// protocol does; an unknown value is named in the Service's
// LoadBalancerProxyProtocol condition.
package loadbalancer
