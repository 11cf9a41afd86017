package graph

import (
	"cmp"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/endpoints"
)

// RouteReasonUnusableEndpoints is Gatewall's ResolvedRefs reason when every
// reference resolves but endpoints of a Service were left out (an
// EndpointSlice or address Gatewall cannot use). The Gateway API has no
// reason for it; its own reasons win when they also apply.
const RouteReasonUnusableEndpoints gatewayv1.RouteConditionReason = "UnusableEndpoints"

// maxRefusalsShown bounds how many refused endpoints one EndpointSlice
// names in a message; the rest are counted.
const maxRefusalsShown = 3

// endpoints returns the endpoints of a Service port that serve, sorted:
// IP addresses, and DNS names with their port (EndpointSlices of
// addressType FQDN, names.go); and why any endpoint of it was left out:
// an EndpointSlice Gatewall cannot use, or addresses, names and ports the
// API server would have refused. The refusals are reported on the routes
// that use the Service; the endpoints that are valid keep serving. An
// endpoint is its first address.
//
// The endpoints that serve are the ready ones; when none is ready, the
// serving ones that are terminating, as Kubernetes intends (a pod that
// drains still answers rather than leave the Service without endpoints).
//
// proto is the Service port's protocol ("" is TCP): a slice's port of
// another protocol is refused.
func (in *Input) endpoints(svc types.NamespacedName, portName string, proto corev1.Protocol) ([]Endpoint, []string, []string) {
	type endpoint struct {
		Endpoint
		name string // a DNS name, when the slice's addressType is FQDN
	}
	seen := map[endpoint]bool{}
	var out, terminating []endpoint
	var refused []string
	for _, s := range in.slicesOf(svc) {
		if msg, ok := in.Unreadable("EndpointSlice", key(s.Namespace, s.Name)); ok {
			refused = append(refused, msg)
			continue
		}
		port, problem := slicePort(s, portName, cmp.Or(proto, corev1.ProtocolTCP))
		if problem == "" && port == 0 {
			continue // a slice of the Service's other ports
		}
		if problem == "" {
			problem = checkAddressType(s.AddressType)
		}
		if problem != "" {
			refused = append(refused, fmt.Sprintf("EndpointSlice %s/%s: %s; none of its endpoints is used", s.Namespace, s.Name, problem))
			continue
		}
		var bad []string
		for _, ep := range s.Endpoints {
			// An unset condition is not known, which Kubernetes reads as
			// ready; serving defaults to ready.
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			serving := ready
			if ep.Conditions.Serving != nil {
				serving = *ep.Conditions.Serving
			}
			if !ready && !serving {
				continue
			}
			// An endpoint's addresses are one pod's, and Kubernetes lets
			// consumers use the first only, as kube-proxy does: the others
			// (up to 100 of them) would only multiply one endpoint.
			if len(ep.Addresses) == 0 {
				continue
			}
			var e endpoint
			if s.AddressType == discoveryv1.AddressTypeFQDN {
				name := strings.TrimSuffix(ep.Addresses[0], ".")
				if err := endpoints.CheckName(name); err != nil {
					bad = append(bad, err.Error())
					continue
				}
				e.name, e.Port = name, port
			} else {
				addr, err := endpointIP(ep.Addresses[0])
				if err != "" {
					bad = append(bad, err)
					continue
				}
				e.Endpoint = Endpoint{Address: addr, Port: port}
			}
			switch {
			case seen[e]:
			case ready:
				seen[e] = true
				out = append(out, e)
			default:
				terminating = append(terminating, e)
			}
		}
		if len(bad) > 0 {
			refused = append(refused, fmt.Sprintf("EndpointSlice %s/%s: %s", s.Namespace, s.Name, summarize(bad)))
		}
	}
	if len(out) == 0 {
		for _, e := range terminating {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	var ips []Endpoint
	var names []string
	for _, e := range out {
		if e.name != "" {
			names = append(names, endpoints.JoinName(e.name, e.Port))
		} else {
			ips = append(ips, e.Endpoint)
		}
	}
	sort.Slice(ips, func(i, j int) bool {
		if ips[i].Address != ips[j].Address {
			return ips[i].Address < ips[j].Address
		}
		return ips[i].Port < ips[j].Port
	})
	sort.Strings(names)
	return ips, names, refused
}

// slicePort finds a slice's port for the Service port portName: its number,
// 0 when the slice does not list that port, or why the port is unusable.
func slicePort(s *discoveryv1.EndpointSlice, portName string, proto corev1.Protocol) (int32, string) {
	for _, p := range s.Ports {
		if (p.Name == nil && portName != "") || (p.Name != nil && *p.Name != portName) {
			continue
		}
		name := portName
		if name == "" {
			name = "(unnamed)"
		}
		switch got := cmp.Or(ptr.Deref(p.Protocol, ""), corev1.ProtocolTCP); {
		case got != proto:
			return 0, fmt.Sprintf("port %s is %s, not %s", name, conditions.Quote(string(got)), proto)
		case p.Port == nil:
			return 0, fmt.Sprintf("port %s has no number", name)
		case !validPort(*p.Port):
			return 0, fmt.Sprintf("port %s is %d, not between 1 and 65535", name, *p.Port)
		}
		return *p.Port, ""
	}
	return 0, ""
}

func checkAddressType(t discoveryv1.AddressType) string {
	switch t {
	// An unset type (the API server requires one) is judged by the addresses.
	// FQDN: names the data plane resolves (names.go).
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN, "":
		return ""
	}
	return fmt.Sprintf("addressType %s is not supported; use IPv4, IPv6 or FQDN", conditions.Quote(string(t)))
}

// endpointIP returns an EndpointSlice address in canonical form, or why it
// cannot be used: endpoints.Address decides, the one check of every
// address the data plane connects to (DNS answers too).
func endpointIP(s string) (string, string) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return "", fmt.Sprintf("address %s is not an IP address", conditions.Quote(s))
	}
	u, err := endpoints.Address(a)
	if err != nil {
		return "", err.Error()
	}
	return u.String(), ""
}

// summarize names the first refused addresses of a slice and counts the rest.
func summarize(bad []string) string {
	if len(bad) <= maxRefusalsShown {
		return strings.Join(bad, ", ") + "; not used"
	}
	return fmt.Sprintf("%s and %d more refused addresses; not used", strings.Join(bad[:maxRefusalsShown], ", "), len(bad)-maxRefusalsShown)
}

// slicesOf returns the EndpointSlices of a Service sorted by name, indexing
// them on first use.
func (in *Input) slicesOf(svc types.NamespacedName) []*discoveryv1.EndpointSlice {
	if in.sliceIndex == nil {
		in.sliceIndex = map[types.NamespacedName][]*discoveryv1.EndpointSlice{}
		for k, s := range in.EndpointSlices {
			name := s.Labels[discoveryv1.LabelServiceName]
			if name == "" {
				continue
			}
			sk := key(k.Namespace, name)
			in.sliceIndex[sk] = append(in.sliceIndex[sk], s)
		}
		for _, ss := range in.sliceIndex {
			sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
		}
	}
	return in.sliceIndex[svc]
}
