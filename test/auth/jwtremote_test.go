package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/test/feedtest"
	"github.com/gatewall/gatewall/test/jwttest"
	"github.com/gatewall/gatewall/test/nginxtest"
)

var gwKey = types.NamespacedName{Namespace: "ns", Name: "gw"}

// idpAddr is where the identity provider listens, appAddr the backend, in
// NGINX's network namespace: not loopback addresses, which the data
// plane's endpoints client never hands NGINX nor fetches from.
const idpAddr, appAddr = "10.99.1.1", "10.99.1.2"

// remoteRoutes: /remote verifies tokens with the set of idp.test, fetched
// by the data plane every 5 s (the shortest keyCache); /loop with the set
// of loop.test, a name that resolves to the data plane's own loopback.
func remoteRoutes(caPEM []byte) string {
	return gateway + `
---
apiVersion: v1
kind: Secret
metadata: {name: idp-ca, namespace: ns}
type: Opaque
data: {ca.crt: ` + base64.StdEncoding.EncodeToString(caPEM) + `}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: remote, namespace: ns}
spec:
  type: JWT
  jwt:
    realm: remote
    source: Remote
    remote: {uri: "https://idp.test:8443/realms/r/certs", caCertificateRefs: [{name: idp-ca}]}
    keyCache: 5s
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: loop, namespace: ns}
spec:
  type: JWT
  jwt:
    realm: loop
    source: Remote
    remote: {uri: "https://loop.test:8443/certs", caCertificateRefs: [{name: idp-ca}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /remote}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: remote}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /loop}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: loop}}]
    backendRefs: [{name: app, port: 80}]
`
}

// keyServer is an identity provider's key set endpoint over TLS, in
// NGINX's network namespace, counting what it is asked.
type keyServer struct {
	hits atomic.Int64
	mu   sync.Mutex
	set  []byte
	down bool
	srv  *http.Server
}

func (k *keyServer) serve(w http.ResponseWriter, _ *http.Request) {
	k.hits.Add(1)
	k.mu.Lock()
	set, down := k.set, k.down
	k.mu.Unlock()
	if down {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	_, _ = w.Write(set)
}

func (k *keyServer) serveKeys(set []byte, down bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.set, k.down = set, down
}

// idpTLS is a CA and a certificate it signed for the names.
func idpTLS(t *testing.T, names ...string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startKeyServer serves key sets over TLS on addr in NGINX's namespace.
func (d *dataPlane) startKeyServer(addr string, cert tls.Certificate, set []byte) *keyServer {
	d.t.Helper()
	l, err := d.srv.Listen("tcp", addr)
	if err != nil {
		d.t.Fatal(err)
	}
	k := &keyServer{set: set}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serve), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go func() { _ = k.srv.ServeTLS(l, "", "") }()
	d.t.Cleanup(func() { _ = k.srv.Close() })
	return k
}

// eventually waits for cond, up to 20 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestJWTRemote: a remote key set reaches a real NGINX through the
// manager's feed and the data plane's own endpoints client: requests are
// answered 503 until it arrives, never let through; then tokens its keys
// signed are; rotated keys are taken within the keyCache; requests never
// fetch it (the server's hits under load are the refreshes); a reload
// keeps it; the server going down keeps the last set verifying, and the
// pod says so; a name that resolves to the data plane's loopback is never
// fetched from.
func TestJWTRemote(t *testing.T) {
	caPEM, cert := idpTLS(t, "idp.test", "loop.test")
	files, ids, keys := renderWithKeys(t, remoteRoutes(caPEM))
	if len(keys) != 2 {
		t.Fatalf("the configuration's key sources: %v", keys)
	}
	d := startWith(t, nginxtest.ServeOptions{Files: files, Addrs: []string{idpAddr + "/32", appAddr + "/32"}}, ids)
	app := d.server(appAddr, nil)
	d.endpoints(map[string][]string{"app": {app.addr}})

	one, two := jwttest.EC("one", elliptic.P256()), jwttest.RSA("two", 2048)
	tokOne := jwttest.Token{Alg: "ES256", Key: one, Claims: valid(nil)}.Sign()
	tokTwo := jwttest.Token{Alg: "PS256", Key: two, Claims: valid(nil)}.Sign()
	if resp, _ := d.do(bearer("/remote/x", tokOne)); resp.StatusCode != 503 {
		t.Fatalf("before the key set is fetched: %d, want 503", resp.StatusCode)
	}

	idp := d.startKeyServer(idpAddr+":8443", cert, jwttest.JWKS([]jwttest.Key{one}))
	self := d.startKeyServer("127.0.0.1:8443", cert, jwttest.JWKS([]jwttest.Key{one}))
	f := feedtest.Start(t, gwKey)
	f.SetKeySources(gwKey, keys)
	f.Set(gwKey, d.endpointSet(map[string][]string{"app": {app.addr}}), endpoints.Resolver{})
	hosts := map[string][]netip.Addr{"idp.test": {netip.MustParseAddr(idpAddr)}, "loop.test": {netip.MustParseAddr("127.0.0.1")}}
	nginx := d.srv.EndpointsClient()
	f.RunClient(t, endpointfeed.ClientOptions{Applier: nginx, KeySets: endpointfeed.KeySetOptions{Applier: nginx,
		Lookup: func(_ context.Context, host string) ([]netip.Addr, error) { return hosts[host], nil },
		Dial:   d.srv.DialContext, RetryWait: 200 * time.Millisecond}})

	eventually(t, "the key set in NGINX", func() bool { resp, _ := d.do(bearer("/remote/x", tokOne)); return resp.StatusCode == 200 })
	if resp, _ := d.do(bearer("/remote/x", tokTwo)); resp.StatusCode != 401 {
		t.Errorf("a key the set does not have: %d, want 401", resp.StatusCode)
	}

	// Under load, the set is fetched as often as its keyCache says, not
	// per request.
	before, start := idp.hits.Load(), time.Now()
	var requests, failed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < 2*time.Second {
				resp, _ := d.do(bearer("/remote/x", tokOne))
				requests.Add(1)
				if resp.StatusCode != 200 {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	fetched := idp.hits.Load() - before
	t.Logf("%d requests in %s, %d failed; the key server was asked %d times", requests.Load(), time.Since(start), failed.Load(), fetched)
	if failed.Load() > 0 || fetched > 1 || requests.Load() < 100 {
		t.Errorf("%d of %d requests failed, the key server was asked %d times: want none failed, at most one refresh in 2 s",
			failed.Load(), requests.Load(), fetched)
	}

	idp.serveKeys(jwttest.JWKS([]jwttest.Key{two}), false)
	rotated := time.Now()
	eventually(t, "the rotated key", func() bool { resp, _ := d.do(bearer("/remote/x", tokTwo)); return resp.StatusCode == 200 })
	if took := time.Since(rotated); took > 5*time.Second+time.Second {
		t.Errorf("the rotated key took %s, over the keyCache of 5 s", took)
	}
	if resp, _ := d.do(bearer("/remote/x", tokOne)); resp.StatusCode != 401 {
		t.Errorf("a key rotated away: %d, want 401", resp.StatusCode)
	}

	master := d.srv.PID()
	if err := d.srv.Reload(files); err != nil {
		t.Fatal(err)
	}
	if resp, _ := d.do(bearer("/remote/x", tokTwo)); resp.StatusCode != 200 || d.srv.PID() != master {
		t.Errorf("after a reload: %d (master %d, was %d), want 200: the dict keeps the set", resp.StatusCode, d.srv.PID(), master)
	}

	idp.serveKeys(nil, true)
	down := idp.hits.Load()
	eventually(t, "the failure reported", func() bool {
		st := f.Status(gwKey)
		return len(st.Pods) == 1 && strings.Contains(st.Pods[0].KeySetsString(), "https://idp.test:8443/realms/r/certs: it answered 502 Bad Gateway (the last key set fetched verifies tokens)")
	})
	if idp.hits.Load() == down {
		t.Error("the set was not fetched again")
	}
	if resp, _ := d.do(bearer("/remote/x", tokTwo)); resp.StatusCode != 200 {
		t.Errorf("with the key server down: %d, want 200 (the last set)", resp.StatusCode)
	}

	if n := self.hits.Load(); n > 0 {
		t.Errorf("the data plane's own loopback was asked for a key set %d times", n)
	}
	if resp, _ := d.do(bearer("/loop/x", tokOne)); resp.StatusCode != 503 {
		t.Errorf("/loop: %d, want 503 (its set is never fetched)", resp.StatusCode)
	}
	st := f.Status(gwKey)
	if !strings.Contains(st.Pods[0].KeySetsString(), "loop.test resolves only to addresses Gatewall refuses") {
		t.Errorf("the pod says %q", st.Pods[0].KeySetsString())
	}
}

// TestJWTKeySetsSurviveARestart: an NGINX that starts again in the pod
// verifies with the remote key sets the endpoints client left in its
// state file, before the client is back.
func TestJWTKeySetsSurviveARestart(t *testing.T) {
	caPEM, _ := idpTLS(t, "idp.test")
	files, ids, keys := renderWithKeys(t, remoteRoutes(caPEM))
	one := jwttest.EC("one", elliptic.P256())
	set, _, err := jwks.Parse(jwttest.JWKS([]jwttest.Key{one}))
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{}
	for id, src := range keys {
		if strings.Contains(src.URI, "idp.test") {
			sets[id] = string(set.Encode())
		}
	}
	state, _ := json.Marshal(map[string]any{"sets": sets})
	d := startWith(t, nginxtest.ServeOptions{Files: files, KeySetsState: state}, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})
	if resp, body := d.do(bearer("/remote/x", jwttest.Token{Alg: "ES256", Key: one, Claims: valid(nil)}.Sign())); resp.StatusCode != 200 {
		t.Errorf("with the state file's set: %d %s", resp.StatusCode, body)
	}
}

// TestKeySetsDictHoldsTheMost: NGINX's dict of remote key sets holds the
// most a Gateway may have (endpoints.MaxKeySources), each of the largest
// size (jwks.MaxKeys RSA keys of jwks.MaxRSABits with the longest kids),
// and takes them again, changed, without refusing one.
func TestKeySetsDictHoldsTheMost(t *testing.T) {
	files, ids := renderGateway(t, gateway)
	d := start(t, files, ids)
	largest := func(seed byte) []byte {
		var keys []map[string]any
		for i := range jwks.MaxKeys {
			n := make([]byte, jwks.MaxRSABits/8)
			if _, err := rand.Read(n); err != nil {
				t.Fatal(err)
			}
			n[0] |= 0x80
			kid := strings.Repeat(string(rune('a'+i%26)), jwks.MaxKidBytes-1) + string(rune('a'+seed%26))
			keys = append(keys, map[string]any{"kty": "RSA", "kid": kid, "n": jwttest.B64(n), "e": "AQAB"})
		}
		data, _ := json.Marshal(map[string]any{"keys": keys})
		set, refused, err := jwks.Parse(data)
		if err != nil || len(refused) > 0 {
			t.Fatal(refused, err)
		}
		return set.Encode()
	}
	nginx := d.srv.EndpointsClient()
	for round := range 3 {
		sets := map[string][]byte{}
		for i := range endpoints.MaxKeySources {
			id := (endpoints.KeySource{URI: "https://idp" + strings.Repeat("x", i) + ".example"}).ID()
			sets[id] = largest(byte(round))
			if round == 2 && i%2 == 0 {
				sets[id] = sets[id][:len(sets[id])/2] // no longer a set: refused alone
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		refused, err := nginx.ApplyKeySets(ctx, sets)
		cancel()
		switch {
		case err != nil:
			t.Fatalf("round %d: %v", round, err)
		case round < 2 && len(refused) > 0:
			t.Fatalf("round %d: %d of %d sets refused: %v", round, len(refused), len(sets), refused)
		case round == 2 && len(refused) != endpoints.MaxKeySources/2:
			t.Fatalf("round 3: %d refused, want the %d that are not sets", len(refused), endpoints.MaxKeySources/2)
		}
		total := 0
		for _, s := range sets {
			total += len(s)
		}
		t.Logf("round %d: %d sets, %d bytes; the dict has %d bytes free", round+1, len(sets), total, d.keySetsFree())
	}
}

// keySetsFree is what NGINX says its key sets dict has free.
func (d *dataPlane) keySetsFree() int {
	d.t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "unix", d.srv.Path(endpoints.Socket))
	}}}
	resp, err := c.Get("http://nginx" + endpoints.KeySetsPath)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Free int }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		d.t.Fatal(err)
	}
	return st.Free
}
