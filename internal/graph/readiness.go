package graph

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// firstReadinessPort is where the search for a Gateway's readiness port
// starts (ReadinessPort).
const firstReadinessPort = 8081

// ReadinessPort is the port on which the Gateway's data-plane pods answer
// their readiness probe: NGINX serves it only with a configuration Gatewall
// pushed, never with the bootstrap one. It is the first port from 8081 up
// that no listener of the Gateway or of its ListenerSets declares (valid or
// not) and that the data plane does not use itself (metrics, the WAF
// enforcer), so it takes no port from a user. The configuration and the
// pod's probe both read it here. 0 when every candidate port is taken.
func (g *Gateway) ReadinessPort() int32 {
	taken := map[gatewayv1.PortNumber]bool{}
	if g.NginxProxy != nil {
		for p := range reservedPorts(g.NginxProxy) {
			taken[p] = true
		}
	}
	for _, l := range g.Listeners {
		taken[l.Source.Port] = true
	}
	for _, s := range g.ListenerSets {
		for _, l := range s.Listeners {
			taken[l.Source.Port] = true
		}
	}
	for p := gatewayv1.PortNumber(firstReadinessPort); p <= 65535; p++ {
		if !taken[p] {
			return int32(p)
		}
	}
	return 0
}
