package graph

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// firstReadinessPort is where the search for a Gateway's readiness port
// starts (ReadinessPort).
const firstReadinessPort = 8081

// ReadinessPort is the port on which the Gateway's data-plane pods answer
// their readiness probe: NGINX serves it only with a configuration Gatewall
// pushed, never with the bootstrap one. The configuration and the pod's
// probe both read it here; 0 when every candidate port is taken.
func (g *Gateway) ReadinessPort() int32 { return g.readinessPort }

// readinessPort is the first port from 8081 up that no listener of the
// Gateway itself declares (valid or not) and that the data plane does not
// use itself (metrics, the WAF enforcer), so it takes no port from the
// Gateway's owner. ListenerSets do not move it: the probe is in the pod
// template, so a move rolls every pod of the Gateway, which a tenant of a
// shared Gateway must not be able to do; a ListenerSet listener on it is
// refused instead (rejectDataPlanePorts).
func readinessPort(np *v1alpha2.NginxProxySpec, own []gatewayv1.Listener) int32 {
	taken := map[gatewayv1.PortNumber]bool{}
	for p := range reservedPorts(np) {
		taken[p] = true
	}
	for _, l := range own {
		taken[l.Port] = true
	}
	for p := gatewayv1.PortNumber(firstReadinessPort); p <= 65535; p++ {
		if !taken[p] {
			return int32(p)
		}
	}
	return 0
}

// setPortsTaken are the ports a ListenerSet's listener cannot have in the
// pod, with what uses each: the data plane's own, and the readiness port.
func (g *Gateway) setPortsTaken() map[gatewayv1.PortNumber]string {
	taken := reservedPorts(g.NginxProxy)
	if p := g.readinessPort; p != 0 {
		taken[gatewayv1.PortNumber(p)] = fmt.Sprintf("the data plane's readiness probe (the first port from %d up that none of the Gateway's own listeners uses)", firstReadinessPort)
	}
	return taken
}
