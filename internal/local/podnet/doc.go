// Package podnet is the local node's pod network. The host's own
// net.ipv4.ip_forward is 0 and may not be changed, so pods cannot be wired to
// the host directly (the host would have to forward between their veths).
// Instead a "node" network namespace plays the node's network stack: it has
// ip_forward=1 (a per-namespace setting), one veth to every pod namespace and
// one uplink veth to the host. Every pod gets a /32 address on its eth0 with
// a default route to the node address, so:
//
//   - the host reaches every pod IP (host → uplink → node namespace → pod),
//   - pods reach each other's IPs (forwarded inside the node namespace),
//   - pods reach the node address, where the runtime can serve (kubelet
//     endpoint, forwards to host loopback services).
//
// Nothing outside namespaces the package creates is changed except one
// route on the host (the pod CIDR via the uplink), which disappears with the
// uplink. Namespaces and links are named with a prefix so that a later run
// can remove what a crashed run left behind.
package podnet
