// Command gatewall-endpoints is the endpoints client of a Gatewall
// data-plane pod: it keeps a stream open to the manager's agent server,
// receives the endpoints of the Gateway's upstreams, and hands them to
// NGINX's Lua balancer through a unix socket in the pod, so that endpoint
// changes need no NGINX reload (package endpointfeed); it also fetches the
// remote JSON Web Key Sets of the Gateway's JWT filters in the background
// and hands them to NGINX the same way. It runs as a
// container of its own beside NGINX, from the data-plane image, with the
// same ServiceAccount token and CA as nginx-agent.
package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr/funcr"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gatewall-endpoints:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gatewall-endpoints", flag.ContinueOnError)
	server := fs.String("server", "", "the manager's agent server, host:port")
	serverName := fs.String("server-name", "", "the name in the server's certificate (default: the host of --server)")
	ca := fs.String("ca-file", "", "the CA bundle that signed the server's certificate")
	token := fs.String("token-file", "", "the pod's ServiceAccount token for the agent server's audience")
	socket := fs.String("nginx-socket", endpoints.Socket, "NGINX's endpoints control socket")
	state := fs.String("state-file", endpoints.StateFile, "where the endpoints are kept for a starting NGINX")
	keysState := fs.String("key-sets-state-file", endpoints.KeySetsStateFile, "where the remote JWT key sets are kept for a starting NGINX")
	verbosity := fs.Int("v", 0, "log verbosity (1 logs every update applied)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *server == "" || *token == "" {
		return fmt.Errorf("--server and --token-file are required")
	}
	log := funcr.NewJSON(func(obj string) { fmt.Fprintln(os.Stderr, obj) }, funcr.Options{Verbosity: *verbosity, LogTimestamp: true})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	nginx := &endpointfeed.NGINX{Socket: *socket, Path: endpoints.ControlPath, StateFile: *state,
		KeySetsPath: endpoints.KeySetsPath, KeySetsStateFile: *keysState}
	// The system's store verifies key set servers without CAs of their
	// own (Debian's ca-certificates in the data-plane image).
	roots, err := x509.SystemCertPool()
	if err != nil {
		log.Info("No system CA store: remote key sets need their filter's caCertificateRefs", "error", err.Error())
	}
	return endpointfeed.Run(ctx, endpointfeed.ClientOptions{
		Address: *server, ServerName: *serverName, CAFile: *ca, TokenFile: *token,
		Applier: nginx,
		Log:     log,
		KeySets: endpointfeed.KeySetOptions{Applier: nginx, SystemRoots: roots},
	})
}
