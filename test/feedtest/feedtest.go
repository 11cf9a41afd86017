// Package feedtest runs the manager's endpoint feed (endpointfeed.Server)
// on a real gRPC server over TLS on the test's loopback, for one
// data-plane pod of one Gateway, and the data plane's own endpoints client
// against it: what a pod's endpoints container does, in a test.
package feedtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpointfeed"
)

// Feed is the manager's feed of one Gateway's pod, "gw-pod".
type Feed struct {
	*endpointfeed.Server
	addr, ca string
}

// Start starts a feed for gw's pod; it stops when the test ends.
func Start(t testing.TB, gw types.NamespacedName) *Feed {
	t.Helper()
	pod := types.NamespacedName{Namespace: gw.Namespace, Name: "gw-pod"}
	s, err := endpointfeed.NewServer(endpointfeed.Options{Log: logr.Discard(),
		Identify: func(context.Context) (types.NamespacedName, types.NamespacedName, bool) { return pod, gw, true }})
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	f := &Feed{Server: s, ca: filepath.Join(t.TempDir(), "ca.crt")}
	if err := os.WriteFile(f.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	g := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})))
	s.Register(g)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return f
}

// RunClient runs the data plane's endpoints client against the feed with
// opts (its address, credentials and logger are the feed's), until the
// test ends.
func (f *Feed) RunClient(t testing.TB, opts endpointfeed.ClientOptions) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Address, opts.ServerName, opts.CAFile, opts.TokenFile = f.addr, "localhost", f.ca, tok
	opts.Log = testr.NewWithInterface(t, testr.Options{})
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = endpointfeed.Run(ctx, opts)
	}()
	t.Cleanup(func() { cancel(); <-done })
}
