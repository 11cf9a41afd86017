package render

import (
	"fmt"

	"github.com/gatewall/gatewall/internal/status"
)

// The Gateway API's release channels a cluster installs its CRDs from.
const (
	ChannelStandard     = "standard"
	ChannelExperimental = "experimental"
)

// Serves says what a cluster with a channel's CRDs of the Gateway API
// release Gatewall is built with (v1.6.3) serves, for the GatewayClass's
// supported features, which the manager finds in the API server's schemas
// instead: the standard channel has every optional kind Gatewall reads
// (ListenerSet, BackendTLSPolicy, TLSRoute, TCPRoute, UDPRoute), and none of
// the optional fields of status.Fields (HTTPRoute's retry is experimental
// in v1.6); the experimental channel has them all. TestChannels checks this
// against the release's CRDs.
func Serves(channel string) (func(status.Requirement) bool, error) {
	switch channel {
	case ChannelStandard, "":
		return func(r status.Requirement) bool { return r.Field == "" }, nil
	case ChannelExperimental:
		return func(status.Requirement) bool { return true }, nil
	}
	return nil, fmt.Errorf("Gateway API channel %q: want %s or %s", channel, ChannelStandard, ChannelExperimental)
}
