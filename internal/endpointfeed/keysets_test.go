package endpointfeed

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/test/jwttest"
)

// idp is an identity provider's key set server over TLS on loopback, its
// certificate for idp.test signed by its own CA; answer, when set, answers
// instead of the key set.
type idp struct {
	srv    *httptest.Server
	caPEM  string
	hits   atomic.Int64
	mu     sync.Mutex
	jwks   []byte
	answer func(http.ResponseWriter, *http.Request)
}

func startIDP(t *testing.T, set []byte) *idp {
	t.Helper()
	i := &idp{jwks: set}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "idp.test"}, DNSNames: []string{"idp.test", "loop.test", "meta.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	i.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	i.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.hits.Add(1)
		i.mu.Lock()
		answer, body := i.answer, i.jwks
		i.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	i.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	i.srv.StartTLS()
	t.Cleanup(i.srv.Close)
	return i
}

func (i *idp) set(jwks []byte, answer func(http.ResponseWriter, *http.Request)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.jwks, i.answer = jwks, answer
}

// network stands in for the pod's: names resolve as hosts says, and every
// connection, to whichever address was checked, reaches the IdP; dialed
// records the addresses asked.
type network struct {
	hosts  map[string][]netip.Addr
	to     string
	mu     sync.Mutex
	dialed []string
}

func (n *network) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	a, ok := n.hosts[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return a, nil
}

func (n *network) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, addr)
	n.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, n.to)
}

func (n *network) dials() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dialed...)
}

// keyRecorder is a KeySetApplier recording what NGINX would hold.
type keyRecorder struct {
	mu    sync.Mutex
	sets  map[string][]byte
	calls int
}

func (r *keyRecorder) ApplyKeySets(_ context.Context, sets map[string][]byte) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sets, r.calls = sets, r.calls+1
	return nil, nil
}

func (r *keyRecorder) kids(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s jwks.Set
	if err := json.Unmarshal(r.sets[id], &s); err != nil {
		return ""
	}
	var kids []string
	for _, k := range s.Keys {
		kids = append(kids, k.Kid)
	}
	return strings.Join(kids, ",")
}

func (r *keyRecorder) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sets[id]
	return ok
}

// runKeysClient runs a client for pod-a fetching key sets with opts.
func runKeysClient(t *testing.T, f *feed, opts KeySetOptions) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("pod-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, ClientOptions{Address: f.addr, ServerName: "localhost", CAFile: f.ca, TokenFile: tok, Applier: newRecorder(),
			Log: logr.Discard(), MaxBackoff: 200 * time.Millisecond, KeySets: opts})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func sourceOf(uri, ca string, refresh time.Duration) (string, endpoints.KeySource) {
	src := endpoints.KeySource{URI: uri, CA: ca, RefreshMillis: refresh.Milliseconds()}
	return src.ID(), src
}

// TestKeySetsFetched: the manager's sources reach the pod's client, which
// fetches each set through the address the check allowed, hands NGINX the
// set written anew, fetches it again every refresh (rotated keys arrive),
// keeps it when the server stops answering (and says so in its acks),
// never gives a host that resolves to loopback or a metadata address a
// connection, and forgets a source the manager no longer sends.
func TestKeySetsFetched(t *testing.T) {
	one, two := jwttest.EC("one", elliptic.P256()), jwttest.EC("two", elliptic.P256())
	server := startIDP(t, jwttest.JWKS([]jwttest.Key{one}))
	net := &network{to: server.srv.Listener.Addr().String(), hosts: map[string][]netip.Addr{
		"idp.test":  {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.20.30.40")},
		"loop.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"meta.test": {netip.MustParseAddr("169.254.169.254")},
	}}
	id, src := sourceOf("https://idp.test:8443/certs", server.caPEM, 300*time.Millisecond)
	loopID, loop := sourceOf("https://loop.test/certs", server.caPEM, time.Second)
	metaID, meta := sourceOf("https://meta.test/certs", server.caPEM, time.Second)
	f := startFeed(t)
	f.SetKeySources(gw, endpoints.KeySources{id: src, loopID: loop, metaID: meta})
	v1 := f.Set(gw, set("10.0.0.1:80"), endpoints.Resolver{})
	nginx := &keyRecorder{}
	runKeysClient(t, f, KeySetOptions{Applier: nginx, Lookup: net.lookup, Dial: net.dial, MinRefresh: 100 * time.Millisecond, RetryWait: 50 * time.Millisecond})

	eventually(t, "the set in NGINX", func() bool { return nginx.kids(id) == "one" })
	for _, d := range net.dials() {
		if d != "10.20.30.40:8443" {
			t.Errorf("a connection to %s: only the address the check allows may be dialed", d)
		}
	}
	eventually(t, "the refused hosts reported", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == v1 && len(p.KeySets) == 2 })
	p, _ := podStatus(f, "pod-a")
	if msg := p.KeySetsString(); !strings.Contains(msg, "loop.test resolves only to addresses Gatewall refuses") ||
		!strings.Contains(msg, "meta.test resolves only to addresses Gatewall refuses") || !strings.Contains(msg, "answered 503") {
		t.Errorf("the pod says %q", msg)
	}
	if nginx.has(loopID) || nginx.has(metaID) {
		t.Error("NGINX holds a set of a refused host")
	}

	server.set(jwttest.JWKS([]jwttest.Key{one, two}), nil)
	eventually(t, "the rotated set", func() bool { return nginx.kids(id) == "one,two" })

	server.set(nil, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	eventually(t, "the failure reported", func() bool {
		p, _ := podStatus(f, "pod-a")
		return strings.Contains(p.KeySetsString(), "https://idp.test:8443/certs: it answered 503 Service Unavailable (the last key set fetched verifies tokens)")
	})
	if nginx.kids(id) != "one,two" {
		t.Errorf("the set NGINX holds was dropped when its server failed: %q", nginx.kids(id))
	}

	f.SetKeySources(gw, endpoints.KeySources{loopID: loop})
	eventually(t, "the source forgotten", func() bool { return !nginx.has(id) })
	hits := server.hits.Load()
	time.Sleep(500 * time.Millisecond)
	if server.hits.Load() != hits {
		t.Errorf("a source the manager no longer sends is fetched again")
	}
}

// TestKeySetFetchRefusals: what a key set's server may not make the client
// do: speak without verified TLS, follow a redirect, send an answer past
// the bound, take past the timeout, or hand NGINX what is not a key set.
func TestKeySetFetchRefusals(t *testing.T) {
	good := jwttest.JWKS([]jwttest.Key{jwttest.EC("one", elliptic.P256())})
	server := startIDP(t, good)
	net := &network{to: server.srv.Listener.Addr().String(), hosts: map[string][]netip.Addr{"idp.test": {netip.MustParseAddr("10.20.30.40")}}}
	k := newKeySets(KeySetOptions{Applier: &keyRecorder{}, Lookup: net.lookup, Dial: net.dial, Timeout: 300 * time.Millisecond}, logr.Discard())
	_, src := sourceOf("https://idp.test/certs", server.caPEM, time.Minute)
	ctx := context.Background()
	if _, _, err := k.fetch(ctx, src); err != nil {
		t.Fatalf("the good server: %v", err)
	}
	for name, tc := range map[string]struct {
		src    endpoints.KeySource
		answer func(http.ResponseWriter, *http.Request)
		want   string
	}{
		"another CA":                        {src: endpoints.KeySource{URI: src.URI, CA: otherCA(t)}, want: "certificate signed by unknown authority"},
		"no CA and not in the system store": {src: endpoints.KeySource{URI: src.URI}, want: "certificate signed by unknown authority"},
		"plain http":                        {src: endpoints.KeySource{URI: "http://idp.test/certs", CA: src.CA}, want: "is not an https URL"},
		"a redirect": {src: src, answer: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://idp.test/elsewhere", http.StatusFound)
		}, want: "redirects are not followed"},
		"an answer too large": {src: src, answer: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"keys":[],"x":"` + strings.Repeat("x", jwks.MaxJWKSBytes) + `"}`))
		}, want: "over 262144 bytes"},
		"a slow server": {src: src, answer: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, want: "Timeout"},
		"not a key set": {src: src, answer: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<html>login</html>"))
		}, want: "not a JSON Web Key Set"},
		"only weak keys": {src: src, answer: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write(jwttest.JWKS([]jwttest.Key{jwttest.HMAC("short", 16)}))
		}, want: "a secret of 16 bytes"},
	} {
		server.set(good, tc.answer)
		start := time.Now()
		set, _, err := k.fetch(ctx, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s %v, want an error saying %q", name, set, err, tc.want)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("%s: took %s", name, time.Since(start))
		}
	}
}

// otherCA is a CA that signed nothing of the IdP's.
func otherCA(t *testing.T) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "other"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
