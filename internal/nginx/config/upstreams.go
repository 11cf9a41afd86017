package config

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/gatewall/gatewall/internal/graph"
)

// sinkUpstream names the upstream that answers a fixed status, for the shares
// of a split whose backend is invalid (500) or has no endpoints (503).
func sinkUpstream(code int) string { return fmt.Sprintf("gatewall_sink_%d", code) }

// sinkSocket is the socket of the internal server behind a sink upstream.
func sinkSocket(code int) string { return fmt.Sprintf("unix:%ssink-%d.sock", RunDir, code) }

// sinkUpstreamH2 and sinkSocketH2 are the same sink spoken to with HTTP/2,
// for the splits of rules passed with grpc_pass.
func sinkUpstreamH2(code int) string { return sinkUpstream(code) + "_h2" }
func sinkSocketH2(code int) string   { return fmt.Sprintf("unix:%ssink-%d-h2.sock", RunDir, code) }

// sinkFor returns the sink upstream answering code, spoken to over HTTP/2 when h2c.
func (b *builder) sinkFor(code int, h2c bool) string {
	b.sinks[code] = true
	if h2c {
		return sinkUpstreamH2(code)
	}
	return sinkUpstream(code)
}

// upstream registers a backend's upstream (one per Service port and
// protocol) and returns its name. It is dynamic (lua.go): its endpoints
// travel apart from the configuration, so that the configuration does not
// depend on them, not even on whether there are any (none: the upstream's
// declared server, a sink, answers 503).
func (b *builder) upstream(be *graph.Backend) string {
	parts := servicePortParts(be)
	h2c := be.Protocol == graph.ProtocolH2C
	if h2c {
		// Connections spoken to with HTTP/2 keep a pool of their own: an
		// idle HTTP/1.1 connection must never carry a gRPC request.
		parts = append(parts, "h2c")
	}
	name := b.names.of(kindUpstream, parts...)
	if _, ok := b.upstreams[name]; ok {
		return name
	}
	u := &Upstream{Name: name, identity: identity(kindUpstream, parts), Settings: b.upstreamSettings[be.Service],
		Key: graph.UpstreamOf(be), Fallback: sinkSocket(503), Unsent: be.Unsent}
	if h2c {
		u.Fallback = sinkSocketH2(503)
	}
	b.sinks[503] = true
	if b.useClusterIP(u.Settings) && be.ClusterIP != "" {
		u.clusterIP = hostPort(be.ClusterIP, be.Port)
	}
	u.Endpoints, u.Names = u.dynamicEndpoints(be.Endpoints, be.Names)
	b.upstreams[name] = u
	return name
}

// dynamicEndpoints are what a dynamic upstream sends the data plane of its
// backend's endpoints and DNS names: them, or its Service's cluster IP
// alone while it has endpoints, when it goes to the cluster IP (kube-proxy
// balances, and balances no DNS names).
func (u *Upstream) dynamicEndpoints(eps []graph.Endpoint, names []string) ([]string, []string) {
	if u.clusterIP == "" {
		return endpointAddresses(eps), names
	}
	if len(eps) > 0 {
		return []string{u.clusterIP}, nil
	}
	return nil, nil
}

// useClusterIP says whether an upstream with these policy settings goes
// to its Service's cluster IP: the policies' say, else the NginxProxy's.
func (b *builder) useClusterIP(set *UpstreamSettings) bool {
	if set != nil && set.UseClusterIP != nil {
		return *set.UseClusterIP
	}
	return b.cfg.Main.Proxy.UseClusterIP
}

// backendUpstream is where a share of requests for a backend goes: its
// upstream, or the sink answering 500 when the backend is invalid.
func (b *builder) backendUpstream(be *graph.Backend, h2c bool) string {
	if !be.Valid {
		return b.sinkFor(500, h2c)
	}
	return b.upstream(be)
}

// servicePortParts name a backend's Service port: its namespace, name and port.
func servicePortParts(be *graph.Backend) []string {
	return []string{be.Service.Namespace, be.Service.Name, strconv.Itoa(int(be.Port))}
}

// endpointAddresses are a backend's endpoints as NGINX server addresses.
func endpointAddresses(eps []graph.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, hostPort(ep.Address, ep.Port))
	}
	return out
}

// hostPort is an NGINX server address: an IP address (in brackets for
// IPv6) and a port. An IPv4-mapped IPv6 address is written as the IPv4
// address it is (the graph gives none: it unmaps them before checking them).
func hostPort(addr string, port int32) string {
	if a, err := netip.ParseAddr(addr); err == nil {
		if a = a.Unmap(); a.Is6() {
			addr = "[" + a.String() + "]"
		} else {
			addr = a.String()
		}
	}
	return addr + ":" + strconv.Itoa(int(port))
}

// share is a backend's share of requests or connections, in hundredths of
// a percent.
type share struct {
	backend *graph.Backend
	basis   int
}

// shares divides 100% between backends by weight; the last takes what
// rounding left.
func shares(backends []*graph.Backend) []share {
	var total int64
	for _, be := range backends {
		total += int64(be.Weight)
	}
	out := make([]share, 0, len(backends))
	given := 0
	for i, be := range backends {
		basis := int(int64(be.Weight) * 10000 / total)
		if i == len(backends)-1 {
			basis = 10000 - given
		}
		given += basis
		out = append(out, share{be, basis})
	}
	return out
}

// split registers a split_clients block sharing requests between backends by
// weight and returns its variable.
func (b *builder) split(backends []*graph.Backend, h2c bool) string {
	s := &Split{}
	for _, sh := range shares(backends) {
		be := sh.backend
		up := b.backendUpstream(be, h2c)
		s.Buckets = append(s.Buckets, SplitBucket{Basis: sh.basis, Upstream: up})
	}
	return b.addSplit(kindSplitVar, s)
}
