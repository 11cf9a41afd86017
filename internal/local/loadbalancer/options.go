package loadbalancer

import (
	"fmt"
	"net/netip"

	"github.com/go-logr/logr"
)

// Options configure the load balancer.
type Options struct {
	// CIDR is where Service addresses come from, inside 127.0.0.0/8.
	// Defaults to 127.0.1.0/24; addresses are handed out from its first host
	// address up, skipping addresses whose ports are taken on the host.
	CIDR string
	// Log receives the load balancer's log. Defaults to discarding.
	Log logr.Logger
}

func (o Options) withDefaults() (Options, netip.Prefix, error) {
	if o.CIDR == "" {
		o.CIDR = "127.0.1.0/24"
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	p, err := netip.ParsePrefix(o.CIDR)
	if err != nil || !netip.MustParsePrefix("127.0.0.0/8").Contains(p.Addr()) || p.Bits() < 8 || p.Bits() > 30 {
		return o, netip.Prefix{}, fmt.Errorf("loadbalancer: CIDR %q must be a prefix inside 127.0.0.0/8", o.CIDR)
	}
	return o, p.Masked(), nil
}
