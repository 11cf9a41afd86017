package endpoints

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// DNS-named endpoints. An upstream's endpoints may be DNS names with a
// port (an ExternalName Service, EndpointSlices of addressType FQDN):
// the manager sends them as they are (Upstream.Names), and the data
// plane's endpoints client resolves them in the background and hands
// NGINX the addresses they answer, checked by Address as any endpoint's,
// so that NGINX's Lua never sees a name. What a name may take of the
// data plane is bounded before it is resolved: the manager counts each
// name as MaxAnswersPerName endpoints of its upstream and of the
// Gateway (graph/endpointbudget.go), and the client keeps no more of its
// answers than that.
const (
	// MaxAnswersPerName bounds the addresses one name gives its upstream:
	// the first, by address, of its answers (IPv4 and IPv6 together).
	MaxAnswersPerName = 16
	// MaxNames bounds the names of a Gateway's upstreams: each is
	// resolved again and again, by every data-plane pod.
	MaxNames = 1000
	// MaxNameLength is the longest DNS name, without its final dot.
	MaxNameLength = 253
)

// Resolution bounds: when a name is resolved again after an answer, and
// how long its answers serve once it stops resolving. A TTL (or the
// resolver's cacheTTL) outside [MinRefresh, MaxRefresh] is taken as the
// nearest bound: a TTL of 0 must not make a pod ask a server many times a
// second, and a TTL of a day must not keep an address that long.
const (
	MinRefresh = 5 * time.Second
	MaxRefresh = time.Hour
	// StaleFor is how long a name that stopped resolving (no answer, an
	// error, a name that no longer exists) keeps its last good answers:
	// a DNS server restarting must not take a backend's endpoints away,
	// but a name gone for good must not be served for long.
	StaleFor = 2 * time.Minute
	// DefaultTimeout bounds one resolution of a name, every server tried
	// included, unless the resolver says otherwise; a resolver's timeout
	// is taken within [MinTimeout, MaxTimeout].
	DefaultTimeout = 5 * time.Second
	MinTimeout     = 100 * time.Millisecond
	MaxTimeout     = 30 * time.Second
)

// Resolver is how the data plane resolves names (NginxProxy
// spec.dnsResolver). The zero value asks the servers of the pod's own
// /etc/resolv.conf, with the default timeout and the answers' TTLs.
type Resolver struct {
	// Servers are the DNS servers to ask, in order: "address:port", or
	// "name:port" for a server the pod's own resolver finds.
	Servers []string `json:"servers,omitempty"`
	// TimeoutMillis bounds one resolution (0: DefaultTimeout).
	TimeoutMillis int64 `json:"timeoutMillis,omitempty"`
	// CacheTTLMillis, when set, replaces the answers' TTLs.
	CacheTTLMillis int64 `json:"cacheTTLMillis,omitempty"`
	// IPv4Only asks for A records only.
	IPv4Only bool `json:"ipv4Only,omitempty"`
}

// Timeout is the bound of one resolution.
func (r Resolver) Timeout() time.Duration {
	if r.TimeoutMillis <= 0 {
		return DefaultTimeout
	}
	return min(max(time.Duration(r.TimeoutMillis)*time.Millisecond, MinTimeout), MaxTimeout)
}

// Refresh is when a name whose answer had ttl is resolved again.
func (r Resolver) Refresh(ttl time.Duration) time.Duration {
	if r.CacheTTLMillis > 0 {
		ttl = time.Duration(r.CacheTTLMillis) * time.Millisecond
	}
	return min(max(ttl, MinRefresh), MaxRefresh)
}

// Check says why a resolver cannot be used, or nil.
func (r Resolver) Check() error {
	if len(r.Servers) > maxServers {
		return fmt.Errorf("%d DNS servers, over the %d a resolver may have", len(r.Servers), maxServers)
	}
	for _, s := range r.Servers {
		if _, err := netip.ParseAddrPort(s); err == nil {
			continue
		}
		if _, _, err := SplitName(s); err != nil {
			return fmt.Errorf("DNS server %q: %w", s, err)
		}
	}
	return nil
}

// maxServers is NginxProxy's bound on dnsResolver.addresses.
const maxServers = 16

// JoinName is a name endpoint: a DNS name (lower case, without a final
// dot) and a port.
func JoinName(name string, port int32) string { return name + ":" + strconv.Itoa(int(port)) }

// SplitName returns the name and port of a name endpoint, or why it is
// not one: a lower-case DNS name of labels of letters, digits and
// hyphens (RFC 1123), that is not an IPv4 address, and a port from 1 to
// 65535.
func SplitName(ep string) (string, uint16, error) {
	name, portText, ok := strings.Cut(ep, ":")
	if !ok {
		return "", 0, errors.New("no port")
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 || strconv.FormatUint(port, 10) != portText {
		return "", 0, fmt.Errorf("port %q is not between 1 and 65535", portText)
	}
	if err := CheckName(name); err != nil {
		return "", 0, err
	}
	return name, uint16(port), nil
}

// CheckName says why name is not a DNS name Gatewall resolves: lower-case
// labels of 1 to 63 letters, digits and hyphens, not starting or ending
// with a hyphen, at most MaxNameLength bytes in all, without a final dot;
// and not an IP address, which DNS does not resolve.
func CheckName(name string) error {
	if name == "" || len(name) > MaxNameLength {
		return fmt.Errorf("a DNS name has 1 to %d characters", MaxNameLength)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a DNS name: its labels have 1 to 63 characters and neither start nor end with a hyphen", name)
		}
		for _, c := range label {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return fmt.Errorf("%q is not a DNS name: lower-case letters, digits, hyphens and dots only", name)
			}
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return fmt.Errorf("%q is an IP address, which DNS does not resolve", name)
	}
	return nil
}
