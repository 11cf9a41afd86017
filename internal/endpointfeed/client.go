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
	for ctx.Err() == nil {
		start := time.Now()
		err := watchOnce(ctx, opts)
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
func watchOnce(ctx context.Context, opts ClientOptions) error {
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
	var set endpoints.Set
	for {
		var u endpoints.Update
		if err := stream.RecvMsg(&u); err != nil {
			return err
		}
		names := u.Set
		refused, err := u.Check()
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrRejected, err)
		} else {
			// An upstream refused keeps what it had; the others are applied.
			u = u.Without(refused)
			var more map[string]string
			more, err = opts.Applier.Apply(ctx, u, set.Apply(u))
			maps.Copy(refused, more)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrRejected):
			// Refused: NGINX keeps what it had; the server, told so, sends
			// the next version whole.
			opts.Log.Info("Endpoints refused; NGINX keeps those it had", "version", u.Version, "error", err.Error())
			if err := stream.SendMsg(&endpoints.Ack{Version: u.Version, Error: err.Error()}); err != nil {
				return err
			}
			continue
		default:
			return err // ctx ended while NGINX could not be reached
		}
		set = set.Apply(u)
		for _, id := range slices.Sorted(maps.Keys(refused)) {
			opts.Log.Info("Endpoints of an upstream refused; it keeps those it had", "version", u.Version, "upstream", id,
				"name", names[id].Name, "error", refused[id])
		}
		opts.Log.V(1).Info("Endpoints applied", "version", u.Version, "full", u.Full, "changed", len(u.Set), "deleted", len(u.Deleted), "refused", len(refused))
		if err := stream.SendMsg(&endpoints.Ack{Version: u.Version, Refused: refused}); err != nil {
			return err
		}
	}
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
