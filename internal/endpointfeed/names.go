package endpointfeed

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// DNSOptions configure how the client resolves the DNS names of upstreams
// (ExternalName Services, FQDN EndpointSlices).
type DNSOptions struct {
	// ResolvConf is the pod's resolv.conf, whose nameservers are asked
	// when the Gateway's NginxProxy names none ("/etc/resolv.conf" when
	// empty).
	ResolvConf string
	// MinRefresh and StaleFor are endpoints.MinRefresh and
	// endpoints.StaleFor when 0 (tests shorten them).
	MinRefresh, StaleFor time.Duration
}

// maxLookups bounds the names resolved at once.
const maxLookups = 16

// serverNamesEvery is how often the DNS servers named by a hostname (and
// the nameservers of resolv.conf) are looked up again.
const serverNamesEvery = time.Minute

// maxFailureWait bounds the wait before a name that failed is asked again.
const maxFailureWait = time.Minute

// names resolves the names of a Gateway's upstreams in the background and
// keeps their answers: each name again when its answer's TTL (bounded)
// runs out, never on NGINX's request path. Its methods are safe for
// concurrent use; run runs its loop.
type names struct {
	opts DNSOptions
	// lookupServer resolves a DNS server's hostname with the pod's own
	// resolver.
	lookupServer func(ctx context.Context, host string) ([]netip.Addr, error)

	wake    chan struct{}
	changed chan struct{}
	sem     chan struct{}

	mu    sync.Mutex
	cfg   endpoints.Resolver
	hosts map[string]*hostState
	// servers are the servers cfg names, as addresses, and when they were
	// found (serverNamesEvery).
	servers   []string
	serverErr string
	serversAt time.Time
}

// hostState is what is known of one name.
type hostState struct {
	// addrs are its usable answers (endpoints.Address), sorted, at most
	// endpoints.MaxAnswersPerName; they serve until expires.
	addrs   []netip.Addr
	expires time.Time
	// why says why its last resolution gave no usable address ("" when
	// it did).
	why string
	// next is when it is resolved again; busy while it is.
	next     time.Time
	busy     bool
	failures int
	// settled is closed once its first resolution ended.
	settled chan struct{}
}

func newNames(opts DNSOptions) *names {
	if opts.ResolvConf == "" {
		opts.ResolvConf = "/etc/resolv.conf"
	}
	if opts.MinRefresh == 0 {
		opts.MinRefresh = endpoints.MinRefresh
	}
	if opts.StaleFor == 0 {
		opts.StaleFor = endpoints.StaleFor
	}
	return &names{opts: opts, hosts: map[string]*hostState{},
		wake: make(chan struct{}, 1), changed: make(chan struct{}, 1), sem: make(chan struct{}, maxLookups),
		lookupServer: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// configure makes r the resolver; a new one resolves every name again
// (keeping their answers meanwhile).
func (n *names) configure(r endpoints.Resolver) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if reflect.DeepEqual(r, n.cfg) {
		return
	}
	n.cfg, n.serversAt = r, time.Time{}
	now := time.Now()
	for _, st := range n.hosts {
		st.next = now
	}
	signal(n.wake)
}

// want makes the names of set the names resolved: new ones at once,
// those no longer in it forgotten. Beyond endpoints.MaxNames, the first
// by name are (the manager sends no more).
func (n *names) want(set endpoints.Set) {
	hosts := hostsOf(set)
	if len(hosts) > endpoints.MaxNames {
		hosts = hosts[:endpoints.MaxNames]
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	keep := map[string]bool{}
	for _, h := range hosts {
		keep[h] = true
		if n.hosts[h] == nil {
			n.hosts[h] = &hostState{settled: make(chan struct{})}
			signal(n.wake)
		}
	}
	for h := range n.hosts {
		if !keep[h] {
			delete(n.hosts, h)
		}
	}
}

// hostsOf are the names of a set's upstreams, sorted, each once.
func hostsOf(set endpoints.Set) []string {
	seen := map[string]bool{}
	for _, u := range set {
		for _, ne := range u.Names {
			if h, _, err := endpoints.SplitName(ne); err == nil {
				seen[h] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// wait waits until every name of set was resolved once, or d passes: a new
// upstream's names have their answers before NGINX is told of it, unless
// a server is slow.
func (n *names) wait(ctx context.Context, set endpoints.Set, d time.Duration) {
	var pending []chan struct{}
	n.mu.Lock()
	for _, h := range hostsOf(set) {
		if st := n.hosts[h]; st != nil {
			pending = append(pending, st.settled)
		}
	}
	n.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for _, c := range pending {
		select {
		case <-c:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// run resolves the names as they fall due until ctx ends.
func (n *names) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		next := now.Add(time.Hour)
		var due []string
		expired := false
		n.mu.Lock()
		cfg := n.cfg
		for h, st := range n.hosts {
			if len(st.addrs) > 0 && !now.Before(st.expires) {
				// A name that stopped resolving served its last answers
				// for as long as they may: its upstream loses them.
				st.addrs, expired = nil, true
			}
			if len(st.addrs) > 0 && st.expires.Before(next) {
				next = st.expires
			}
			switch {
			case st.busy:
			case !now.Before(st.next):
				st.busy = true
				due = append(due, h)
			case st.next.Before(next):
				next = st.next
			}
		}
		n.mu.Unlock()
		if expired {
			signal(n.changed)
		}
		for _, h := range due {
			go func() {
				select {
				case n.sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-n.sem }()
				n.resolve(ctx, h, cfg)
			}()
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		case <-timer.C:
		}
	}
}

// resolve resolves one name and keeps what it answered.
func (n *names) resolve(ctx context.Context, host string, cfg endpoints.Resolver) {
	servers, serverErr := n.serversOf(ctx, cfg)
	lctx, cancel := context.WithTimeout(ctx, cfg.Timeout())
	a, err := lookup(lctx, servers, host, cfg.IPv4Only)
	cancel()
	if len(servers) == 0 && serverErr != "" {
		err = fmt.Errorf("%s", serverErr)
	}
	if ctx.Err() != nil {
		return
	}
	usable, refused := usableAnswers(a.addrs)
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.hosts[host]
	if st == nil {
		return // no longer wanted
	}
	st.busy = false
	had, hadWhy := st.addrs, st.why
	switch {
	case err == nil && len(usable) > 0:
		refresh := n.refresh(cfg, a.ttl)
		st.addrs, st.why, st.failures = usable, "", 0
		st.next, st.expires = now.Add(refresh), now.Add(refresh+n.opts.StaleFor)
	case err == nil:
		// The name says where it is, and no address of it may be used:
		// its older answers are not what it says any more.
		st.addrs, st.failures = nil, 0
		st.why = "it resolves only to addresses Gatewall refuses (" + strings.Join(refused, "; ") + ")"
		st.next = now.Add(n.refresh(cfg, a.ttl))
	default:
		st.failures++
		st.why = err.Error()
		st.next = now.Add(min(n.opts.MinRefresh<<min(st.failures-1, 10), maxFailureWait))
	}
	select {
	case <-st.settled:
	default:
		close(st.settled)
	}
	if !slices.Equal(had, st.addrs) || hadWhy != st.why {
		signal(n.changed)
	}
	signal(n.wake)
}

// refresh is when a name answered with ttl is resolved again: the
// resolver's cacheTTL when set, else ttl, within [MinRefresh, MaxRefresh].
func (n *names) refresh(cfg endpoints.Resolver, ttl time.Duration) time.Duration {
	if cfg.CacheTTLMillis > 0 {
		ttl = time.Duration(cfg.CacheTTLMillis) * time.Millisecond
	}
	return min(max(ttl, n.opts.MinRefresh), endpoints.MaxRefresh)
}

// usableAnswers are the addresses endpoints.Address lets the data plane
// connect to, unmapped, sorted, each once, at most MaxAnswersPerName; and
// the others, with why (three at most).
func usableAnswers(addrs []netip.Addr) ([]netip.Addr, []string) {
	var usable []netip.Addr
	var refused []string
	for _, a := range addrs {
		u, err := endpoints.Address(a)
		if err != nil {
			if len(refused) < 3 {
				refused = append(refused, err.Error())
			}
			continue
		}
		usable = append(usable, u)
	}
	slices.SortFunc(usable, netip.Addr.Compare)
	usable = slices.Compact(usable)
	return usable[:min(len(usable), endpoints.MaxAnswersPerName)], refused
}

// serversOf are the servers to ask: cfg's, a hostname among them resolved
// by the pod's own resolver, or the nameservers of resolv.conf; found
// again every serverNamesEvery. When none can be found, why.
func (n *names) serversOf(ctx context.Context, cfg endpoints.Resolver) ([]string, string) {
	n.mu.Lock()
	if !n.serversAt.IsZero() && time.Since(n.serversAt) < serverNamesEvery {
		defer n.mu.Unlock()
		return n.servers, n.serverErr
	}
	n.mu.Unlock()
	var servers, bad []string
	if len(cfg.Servers) == 0 {
		data, err := os.ReadFile(n.opts.ResolvConf)
		servers = resolvConfServers(data)
		if len(servers) == 0 {
			bad = append(bad, fmt.Sprintf("%s names no nameserver (%v)", n.opts.ResolvConf, err))
		}
	}
	for _, s := range cfg.Servers {
		if _, err := netip.ParseAddrPort(s); err == nil {
			servers = append(servers, s)
			continue
		}
		host, port, err := endpoints.SplitName(s)
		if err != nil {
			continue // the update's check refused it
		}
		lctx, cancel := context.WithTimeout(ctx, cfg.Timeout())
		addrs, err := n.lookupServer(lctx, host)
		cancel()
		if err != nil || len(addrs) == 0 {
			bad = append(bad, fmt.Sprintf("the DNS server %s does not resolve with the pod's resolver (%v)", host, err))
			continue
		}
		for _, a := range addrs {
			servers = append(servers, netip.AddrPortFrom(a.Unmap(), port).String())
		}
	}
	why := ""
	if len(servers) == 0 {
		why = "no DNS server to ask: " + strings.Join(bad, "; ")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if reflect.DeepEqual(cfg, n.cfg) {
		n.servers, n.serverErr, n.serversAt = servers, why, time.Now()
	}
	return servers, why
}

// expand is set as NGINX takes it: each upstream's addresses and the
// answers of its names, sorted, without the names.
func (n *names) expand(set endpoints.Set) endpoints.Set {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(endpoints.Set, len(set))
	for id, u := range set {
		if len(u.Names) == 0 {
			out[id] = endpoints.Upstream{Name: u.Name, Endpoints: u.Endpoints}
			continue
		}
		eps := slices.Clone(u.Endpoints)
		for _, ne := range u.Names {
			host, port, err := endpoints.SplitName(ne)
			if err != nil || n.hosts[host] == nil {
				continue
			}
			for _, a := range n.hosts[host].addrs {
				eps = append(eps, netip.AddrPortFrom(a, port).String())
			}
		}
		slices.Sort(eps)
		out[id] = endpoints.Upstream{Name: u.Name, Endpoints: slices.Compact(eps)}
	}
	return out
}

// unresolved are the upstreams of set some of whose names give no
// address, by ID, with why; a name not resolved yet is not one of them.
// The text changes only when what is known of a name changes.
func (n *names) unresolved(set endpoints.Set) map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]string{}
	for id, u := range set {
		var why []string
		for _, ne := range u.Names {
			host, _, err := endpoints.SplitName(ne)
			if err != nil {
				continue
			}
			st := n.hosts[host]
			switch {
			case st == nil:
				why = append(why, host+": not resolved (over the names the data plane resolves)")
			case st.why == "":
			case len(st.addrs) > 0:
				why = append(why, fmt.Sprintf("%s: %s (its last answers serve up to %s past their TTL)", host, st.why, n.opts.StaleFor))
			default:
				why = append(why, host+": "+st.why)
			}
		}
		if len(why) > 0 {
			out[id] = strings.Join(why, "; ")
		}
	}
	return out
}
