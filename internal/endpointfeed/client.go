package endpointfeed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// Applier hands updates to the data plane.
type Applier interface {
	// Apply applies u, which takes the data plane to set. It returns the
	// upstreams the data plane refused alone, by ID, with why: they keep
	// the endpoints they had, the others are applied. An error wrapping
	// ErrRejected means the data plane refused u whole and keeps what it
	// had; any other error is one Apply could not get past before ctx ended.
	Apply(ctx context.Context, u endpoints.Update, set endpoints.Set) (refused map[string]string, err error)
}

// ErrRejected marks an update the data plane refused.
var ErrRejected = errors.New("update rejected")

// ClientOptions configure Run.
type ClientOptions struct {
	// Address is the manager's agent server, host:port.
	Address string
	// ServerName is the name its certificate must hold (Address's host
	// when empty); CAFile the CA bundle that signed it.
	ServerName string
	CAFile     string
	// TokenFile is the pod's projected ServiceAccount token, read again
	// at every connection (the kubelet rotates it).
	TokenFile string
	Applier   Applier
	Log       logr.Logger
	// MaxBackoff bounds the wait between connection attempts (30 s when 0).
	MaxBackoff time.Duration
	// DNS configures the resolution of upstreams' names (names.go).
	DNS DNSOptions
	// KeySets configures the fetching of JWT filters' remote key sets
	// (keysets.go).
	KeySets KeySetOptions
}

// maxUpdateSize bounds one update the client accepts: a full set of tens
// of thousands of upstreams.
const maxUpdateSize = 256 << 20

// Run keeps a Watch stream open to the manager and applies what it
// receives, until ctx ends. The endpoints applied stay in force while it
// reconnects.
func Run(ctx context.Context, opts ClientOptions) error {
	if opts.Applier == nil || opts.Address == "" {
		return errors.New("endpoint feed client: an address and an Applier are required")
	}
	maxBackoff := opts.MaxBackoff
	if maxBackoff == 0 {
		maxBackoff = 30 * time.Second
	}
	backoff := 100 * time.Millisecond
	// The names' answers outlive a stream: a reconnect resolves nothing
	// again before it hands NGINX the whole set.
	dns := newNames(opts.DNS)
	go dns.run(ctx)
	// So do the key sets: NGINX keeps verifying with them meanwhile.
	keys := newKeySets(opts.KeySets, opts.Log)
	go keys.run(ctx)
	for ctx.Err() == nil {
		start := time.Now()
		err := watchOnce(ctx, opts, dns, keys)
		if ctx.Err() != nil {
			break
		}
		if time.Since(start) > maxBackoff {
			backoff = 100 * time.Millisecond // it ran a while: a new failure
		}
		opts.Log.Info("Endpoint stream ended; the endpoints in force stay until the next one", "error", errString(err), "retryIn", backoff.String())
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// watchOnce runs one stream: the whole set first, then changes.
func watchOnce(ctx context.Context, opts ClientOptions, dns *names, keys *keySets) error {
	creds, err := transportCredentials(opts)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(opts.Address,
		grpc.WithTransportCredentials(creds),
		grpc.WithPerRPCCredentials(tokenFile(opts.TokenFile)),
		// The agent server allows a ping every 10 s at most.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(Codec), grpc.MaxCallRecvMsgSize(maxUpdateSize)))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", opts.Address, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := conn.NewStream(ctx, &serviceDesc.Streams[0], WatchMethod)
	if err != nil {
		return fmt.Errorf("opening the endpoint stream: %w", err)
	}
	opts.Log.Info("Endpoint stream open", "server", opts.Address)
	updates := make(chan endpoints.Update)
	recvErr := make(chan error, 1)
	go func() {
		for {
			var u endpoints.Update
			if err := stream.RecvMsg(&u); err != nil {
				recvErr <- err
				return
			}
			select {
			case updates <- u:
			case <-ctx.Done():
				return
			}
		}
	}()
	w := &streamState{opts: opts, dns: dns, keys: keys, stream: stream}
	var wait <-chan time.Time
	for {
		select {
		case u := <-updates:
			if err := w.update(ctx, u); err != nil {
				return err
			}
		case <-dns.changed:
			// Answers changed; they reach NGINX at most every
			// resolvedEvery, however many names change.
			if wait == nil {
				wait = time.After(time.Until(w.resolvedAt.Add(resolvedEvery)))
			}
		case <-wait:
			wait = nil
			if err := w.resolved(ctx); err != nil {
				return err
			}
		case <-keys.failed:
			if err := w.report(); err != nil {
				return err
			}
		case err := <-recvErr:
			return err
		}
	}
}

// resolvedEvery bounds how often changed answers of names reach NGINX.
const resolvedEvery = 250 * time.Millisecond

// firstAnswers bounds how long an update waits for the first answers of
// the names it brings: a new upstream is handed to NGINX with them,
// unless a DNS server is slow (they follow when they come).
const firstAnswers = time.Second

// streamState is one stream's state: the manager's set, and what NGINX was
// handed of it (its names resolved).
type streamState struct {
	opts   ClientOptions
	dns    *names
	keys   *keySets
	stream grpc.ClientStream
	// set is the manager's set applied, with names; nginx is what NGINX
	// holds of it, addresses only; version is the last version applied.
	set, nginx endpoints.Set
	version    uint64
	// reported is the last map of unresolved upstreams the manager was
	// sent, reportedKeys of key sets failing; resolvedAt when answers
	// last reached NGINX.
	reported, reportedKeys map[string]string
	resolvedAt             time.Time
}

// update applies an update of the manager and acknowledges it.
func (w *streamState) update(ctx context.Context, u endpoints.Update) error {
	names := u.Set
	refused, err := u.Check()
	var next endpoints.Set
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrRejected, err)
	} else {
		// An upstream refused keeps what it had; the others are applied.
		u = u.Without(refused)
		next = w.set.Apply(u)
		if u.KeySources != nil {
			w.keys.configure(*u.KeySources)
		}
		w.dns.configure(ptr.Deref(u.Resolver, endpoints.Resolver{}))
		w.dns.want(next)
		w.dns.wait(ctx, u.Set, firstAnswers)
		var more map[string]string
		more, err = w.apply(ctx, u.Version, u.Full, next)
		maps.Copy(refused, more)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrRejected):
		// Refused: NGINX keeps what it had; the server, told so, sends
		// the next version whole.
		w.opts.Log.Info("Endpoints refused; NGINX keeps those it had", "version", u.Version, "error", err.Error())
		return w.stream.SendMsg(&endpoints.Ack{Version: u.Version, Error: err.Error()})
	default:
		return err // ctx ended while NGINX could not be reached
	}
	w.set, w.version = next, u.Version
	for _, id := range slices.Sorted(maps.Keys(refused)) {
		w.opts.Log.Info("Endpoints of an upstream refused; it keeps those it had", "version", u.Version, "upstream", id,
			"name", names[id].Name, "error", refused[id])
	}
	w.opts.Log.V(1).Info("Endpoints applied", "version", u.Version, "full", u.Full, "changed", len(u.Set), "deleted", len(u.Deleted), "refused", len(refused))
	w.reported, w.reportedKeys = w.dns.unresolved(w.set), w.keys.failures()
	return w.stream.SendMsg(&endpoints.Ack{Version: u.Version, Refused: refused, Unresolved: w.reported, KeySets: w.reportedKeys})
}

// report tells the manager that the key sets failing changed: the version
// last acknowledged, again, with both maps.
func (w *streamState) report() error {
	failing := w.keys.failures()
	if w.set == nil || maps.Equal(failing, w.reportedKeys) {
		return nil
	}
	w.reportedKeys = failing
	return w.stream.SendMsg(&endpoints.Ack{Version: w.version, Unresolved: w.reported, KeySets: failing})
}

// apply hands NGINX the set with its names resolved: what changed from
// what it was handed, or all of it (full). It returns the upstreams NGINX
// refused, which keep what they had.
func (w *streamState) apply(ctx context.Context, version uint64, full bool, set endpoints.Set) (map[string]string, error) {
	want := w.dns.expand(set)
	u := endpoints.Diff(w.nginx, want, version)
	if full || w.nginx == nil {
		u = endpoints.Snapshot(want, version)
	}
	if u.Empty() {
		return nil, nil
	}
	refused, err := w.opts.Applier.Apply(ctx, u, want)
	if err != nil {
		if errors.Is(err, ErrRejected) && !full {
			// What NGINX holds is not known any more: the next goes whole.
			w.nginx = nil
		}
		return nil, err
	}
	// An upstream NGINX refused is taken as sent: it is sent again when
	// what it would be sent changes (NGINX would refuse the same again).
	w.nginx, w.resolvedAt = want, time.Now()
	return refused, nil
}

// resolved hands NGINX the changed answers of names, and tells the
// manager when what does not resolve changed (a report: the last version
// acknowledged, again, with the new map).
func (w *streamState) resolved(ctx context.Context) error {
	if w.set == nil {
		return nil // nothing applied yet: the first update resolves
	}
	refused, err := w.apply(ctx, w.version, false, w.set)
	unresolved := w.dns.unresolved(w.set)
	switch {
	case errors.Is(err, ErrRejected):
		w.opts.Log.Info("NGINX refused the new answers of DNS names; it keeps the endpoints it had", "error", err.Error())
		for id := range w.set {
			if len(w.set[id].Names) > 0 && unresolved[id] == "" {
				unresolved[id] = "NGINX refused the addresses its names resolve to: " + err.Error()
			}
		}
	case err != nil:
		return err
	}
	for id, why := range refused {
		unresolved[id] = "NGINX refused the addresses its names resolve to: " + why
	}
	if maps.Equal(unresolved, w.reported) {
		return nil
	}
	w.reported = unresolved
	for _, id := range slices.Sorted(maps.Keys(unresolved)) {
		w.opts.Log.Info("Names of an upstream do not resolve", "upstream", id, "name", w.set[id].Name, "why", unresolved[id])
	}
	return w.stream.SendMsg(&endpoints.Ack{Version: w.version, Unresolved: unresolved, KeySets: w.reportedKeys})
}

func transportCredentials(opts ClientOptions) (credentials.TransportCredentials, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: opts.ServerName}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = strings.Cut(opts.Address, ":")
	}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", opts.CAFile)
		}
		cfg.RootCAs = pool
	}
	return credentials.NewTLS(cfg), nil
}

// tokenFile sends the token in the file as the agent does (the
// authorization metadata), read at each call.
type tokenFile string

func (f tokenFile) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	data, err := os.ReadFile(string(f))
	if err != nil {
		return nil, fmt.Errorf("reading the token: %w", err)
	}
	return map[string]string{"authorization": strings.TrimSpace(string(data))}, nil
}

func (tokenFile) RequireTransportSecurity() bool { return true }
