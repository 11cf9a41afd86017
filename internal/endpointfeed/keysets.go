package endpointfeed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/jwks"
)

// Remote key sets of JWT filters: the manager sends their sources
// (endpoints.KeySources) with the endpoints; the client fetches each in
// the background, again every refresh, checks what it gets as the manager
// checks a Secret's key set (jwks.Parse) and hands NGINX the sets, written
// anew, whenever one changes (KeySetApplier). A request never fetches
// anything: until a set is here, its filters answer 503; once it is, a
// fetch that fails keeps it (and is tried again, sooner), and the sources
// that fail are named in every acknowledgement.
//
// A fetch goes only where the source's URL says, over https, verified by
// the source's CAs or the pod's system store, within KeyFetchTimeout and
// jwks.MaxJWKSBytes, no redirect followed, no proxy: its host's addresses
// are checked as every endpoint's (endpoints.Address: no loopback,
// link-local or metadata address), and the connection goes to the
// address checked, never to one a second lookup gives.

// KeySetApplier hands NGINX the key sets fetched.
type KeySetApplier interface {
	// ApplyKeySets replaces the sets NGINX holds with sets (by source
	// ID, each jwks.Set's JSON), trying until NGINX answers or ctx ends.
	// It returns the sets NGINX refused, which keep what they had.
	ApplyKeySets(ctx context.Context, sets map[string][]byte) (refused map[string]string, err error)
}

// KeySetOptions configure the fetching of remote key sets.
type KeySetOptions struct {
	// Applier hands NGINX the sets; nil: sources are ignored.
	Applier KeySetApplier
	// Lookup resolves a host's addresses (the pod's resolver when nil);
	// Dial connects to an address it gave, once checked (a net.Dialer
	// when nil). Tests reach servers in NGINX's network namespace.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	// SystemRoots verify the sources without CAs of their own (the
	// system's store when nil).
	SystemRoots *x509.CertPool
	// MinRefresh replaces endpoints.MinKeyRefresh, RetryWait the first
	// wait after a failure (retryWaitKeys) and Timeout
	// endpoints.KeyFetchTimeout (tests shorten them).
	MinRefresh, RetryWait, Timeout time.Duration
}

// Waits after a failed fetch: RetryWait, doubling up to maxRetryWaitKeys,
// and never past the source's refresh.
const (
	retryWaitKeys    = 2 * time.Second
	maxRetryWaitKeys = time.Minute
	// maxFetches bounds the sets fetched at once.
	maxFetches = 4
)

// keySets fetches the sources it is given and keeps the sets; run runs
// its loop. Its methods are safe for concurrent use.
type keySets struct {
	opts KeySetOptions
	log  logr.Logger
	wake chan struct{}
	// failed is signalled when what fails changes (for a report).
	failed chan struct{}

	mu      sync.Mutex
	sources map[string]*keySource
	// pushed is what NGINX was handed last (nil: nothing yet); stale says
	// it must be handed the sets again (a source is gone).
	pushed map[string][]byte
	stale  bool
}

// keySource is one source's state.
type keySource struct {
	src endpoints.KeySource
	// set is the last set fetched and checked; nil until one is.
	set []byte
	// next is when it is fetched next; busy while it is.
	next time.Time
	busy bool
	// failures count the fetches failed in a row; why says why the last did.
	failures int
	why      string
}

func newKeySets(opts KeySetOptions, log logr.Logger) *keySets {
	if opts.Lookup == nil {
		opts.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opts.Dial == nil {
		var d net.Dialer
		opts.Dial = d.DialContext
	}
	if opts.MinRefresh == 0 {
		opts.MinRefresh = endpoints.MinKeyRefresh
	}
	if opts.RetryWait == 0 {
		opts.RetryWait = retryWaitKeys
	}
	if opts.Timeout == 0 {
		opts.Timeout = endpoints.KeyFetchTimeout
	}
	return &keySets{opts: opts, log: log, wake: make(chan struct{}, 1), failed: make(chan struct{}, 1), sources: map[string]*keySource{}}
}

// configure makes ks the sources: new ones are fetched at once, those no
// longer in them are forgotten (NGINX is handed the sets without them).
func (k *keySets) configure(ks endpoints.KeySources) {
	if k.opts.Applier == nil {
		if len(ks) > 0 {
			k.log.Info("Remote JWT key sets are not fetched: this client hands NGINX no key sets", "sources", len(ks))
		}
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	changed := false
	for id, src := range ks {
		s := k.sources[id]
		switch {
		case s == nil:
			k.sources[id] = &keySource{src: src}
		case s.src.RefreshMillis != src.RefreshMillis:
			s.src = src
			s.next = time.Time{} // fetched at once, then at the new pace
		}
	}
	for id := range k.sources {
		if _, ok := ks[id]; !ok {
			delete(k.sources, id)
			changed = true
		}
	}
	k.stale = k.stale || changed
	signal(k.wake)
}

// failures are the sources whose last fetch failed, by ID, with why.
func (k *keySets) failures() map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]string{}
	for id, s := range k.sources {
		if s.why != "" {
			held := "no key set fetched yet: its filters' requests are answered 503"
			if s.set != nil {
				held = "the last key set fetched verifies tokens"
			}
			out[id] = fmt.Sprintf("%s: %s (%s)", s.src.URI, s.why, held)
		}
	}
	return out
}

// run fetches the sources as they fall due and hands NGINX the sets
// whenever they change, until ctx ends.
func (k *keySets) run(ctx context.Context) {
	sem := make(chan struct{}, maxFetches)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		next := now.Add(time.Hour)
		k.mu.Lock()
		var due []string
		for id, s := range k.sources {
			switch {
			case s.busy:
			case !now.Before(s.next):
				s.busy = true
				due = append(due, id)
			case s.next.Before(next):
				next = s.next
			}
		}
		sets := map[string][]byte{}
		for id, s := range k.sources {
			if s.set != nil {
				sets[id] = s.set
			}
		}
		push := k.stale || len(sets) > 0 && k.pushed == nil ||
			k.pushed != nil && !maps.EqualFunc(sets, k.pushed, func(a, b []byte) bool { return string(a) == string(b) })
		k.mu.Unlock()
		if push {
			if err := k.push(ctx, sets); err != nil {
				if ctx.Err() != nil {
					return
				}
				next = now.Add(retryWait)
			}
		}
		for _, id := range due {
			go func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-sem }()
				k.fetchOne(ctx, id)
			}()
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-k.wake:
		case <-timer.C:
		}
	}
}

// pushTimeout bounds handing NGINX the sets: an NGINX that does not take
// them (not running yet, or an older configuration without the key
// sets' location) must not stop the sets from being fetched; they are
// handed again.
const pushTimeout = 10 * time.Second

// push hands NGINX the sets.
func (k *keySets) push(ctx context.Context, sets map[string][]byte) error {
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	refused, err := k.opts.Applier.ApplyKeySets(ctx, sets)
	if err != nil {
		k.log.Info("NGINX did not take the JWT key sets; they are handed again", "error", err.Error())
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(refused)) {
		k.log.Info("NGINX refused a JWT key set; it keeps the one it had", "keySet", id, "error", refused[id])
	}
	k.mu.Lock()
	k.pushed, k.stale = sets, false
	k.mu.Unlock()
	return nil
}

// fetchOne fetches one source and keeps what it got.
func (k *keySets) fetchOne(ctx context.Context, id string) {
	k.mu.Lock()
	s := k.sources[id]
	if s == nil {
		k.mu.Unlock()
		return
	}
	src := s.src
	k.mu.Unlock()
	set, refused, err := k.fetch(ctx, src)
	if ctx.Err() != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	defer signal(k.wake)
	s = k.sources[id]
	if s == nil || s.src != src {
		if s != nil {
			s.busy = false
		}
		return // reconfigured meanwhile
	}
	s.busy = false
	wasWhy := s.why
	refresh := k.refresh(src)
	if err != nil {
		s.failures++
		s.why = cutReason(err.Error())
		wait := min(k.opts.RetryWait<<min(s.failures-1, 10), maxRetryWaitKeys, refresh)
		s.next = time.Now().Add(wait)
		k.log.Info("Fetching a JWT key set failed", "keySet", id, "uri", src.URI, "error", err.Error(), "retryIn", wait.String(), "held", s.set != nil)
	} else {
		if len(refused) > 0 {
			k.log.Info("Keys of a JWT key set are refused; the others verify tokens", "keySet", id, "uri", src.URI, "refused", strings.Join(refused, "; "))
		}
		s.set, s.failures, s.why = set, 0, ""
		s.next = time.Now().Add(refresh)
	}
	if s.why != wasWhy {
		signal(k.failed)
	}
}

// refresh is how often a source is fetched: its RefreshMillis within the
// bounds (opts.MinRefresh for the lower one).
func (k *keySets) refresh(src endpoints.KeySource) time.Duration {
	d := time.Duration(src.RefreshMillis) * time.Millisecond
	if src.RefreshMillis <= 0 {
		d = endpoints.DefaultKeyRefresh
	}
	return min(max(d, k.opts.MinRefresh), endpoints.MaxKeyRefresh)
}

// fetch gets a source's key set and returns it checked and written anew,
// with the keys it refused.
func (k *keySets) fetch(ctx context.Context, src endpoints.KeySource) ([]byte, []string, error) {
	if err := src.Check(); err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(src.URI)
	if err != nil {
		return nil, nil, err
	}
	roots := k.opts.SystemRoots
	if src.CA != "" {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM([]byte(src.CA)) {
			return nil, nil, errors.New("its CA bundle holds no certificate")
		}
	}
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = "443"
	}
	transport := &http.Transport{
		Proxy: nil, // never through a proxy the environment names
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return k.dial(ctx, network, host, port)
		},
		TLSClientConfig:        &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: k.opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URI, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	req.Header.Set("User-Agent", "gatewall-endpoints")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("it answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwks.MaxJWKSBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading its answer: %w", err)
	}
	if len(body) > jwks.MaxJWKSBytes {
		return nil, nil, fmt.Errorf("its answer is over %d bytes", jwks.MaxJWKSBytes)
	}
	set, refused, err := jwks.Parse(body)
	if err != nil {
		return nil, nil, err
	}
	return set.Encode(), refused, nil
}

// dial connects to the host's first address the address check allows.
func (k *keySets) dial(ctx context.Context, network, host, port string) (net.Conn, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if addrs, err = k.opts.Lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
	}
	var allowed []netip.Addr
	for _, a := range addrs {
		if ok, err := endpoints.Address(a); err == nil {
			allowed = append(allowed, ok)
		}
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("%s resolves only to addresses Gatewall refuses (loopback, link-local, unspecified, multicast): %v", host, addrs)
	}
	slices.SortFunc(allowed, func(a, b netip.Addr) int { return a.Compare(b) })
	var errs []error
	for _, a := range allowed[:min(len(allowed), endpoints.MaxAnswersPerName)] {
		conn, err := k.opts.Dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}
