package render_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/certgen"
	"github.com/gatewall/gatewall/test/nginxtest"
	"github.com/gatewall/gatewall/test/snapgen"
)

var (
	certsCount = flag.Int("certs.count", 32, "materials TestNginxLoadsAcceptedCertificates draws")
	certsSeed  = flag.Uint64("certs.seed", 1, "seed of its first material; material i uses seed+i")
)

// certsBatch is how many Gateways' configurations one nginx -t batch tests.
const certsBatch = 64

// TestNginxLoadsAcceptedCertificates draws certificate material of every
// shape NGINX's OpenSSL may refuse (certgen.Draw: weak keys and digests
// anywhere in a chain, PEM headers, junk, TRUSTED CERTIFICATE and broken
// blocks, keys in tls.crt, encrypted and mismatched keys, odd orders,
// duplicates, expired certificates), gives each to a Gateway of its own
// as a listener's certificate, the backend client certificate, a port's
// client validation CA and a BackendTLSPolicy's CA, and checks that:
//
//   - every configuration Gatewall renders passes real `nginx -t`: what it
//     accepts, NGINX loads;
//   - what it refuses is refused on the object that brought it: the
//     listeners using the certificate, the Gateway's backend client
//     certificate, the listener validating clients with the CA, the
//     backend verified with it; never the Gateway.
//
// It also writes each material as Gatewall wrote it before it parsed
// certificates (byte for byte) and runs `nginx -t` on that, and reports
// how many pieces Go's own checks accepted that NGINX refused (the class
// of issue 30's finding 1), and how many Gatewall refuses that NGINX
// would have loaded (refusing more than needed). The default run (32
// materials, a few seconds) keeps `go test` short; a long run:
//
//	go test ./internal/render -run TestNginxLoadsAcceptedCertificates -certs.count=3000 -certs.seed=1000 -v
func TestNginxLoadsAcceptedCertificates(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	type drawn struct {
		seed uint64
		m    certgen.Material
		key  types.NamespacedName
		// Why pki refuses tls.crt and tls.key, and ca.crt (nil: accepted).
		pairErr, caErr error
	}
	var all []*drawn
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	for i := range *certsCount {
		seed := *certsSeed + uint64(i)
		m, err := certgen.Draw(snapgen.FromSeed(seed))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		d := &drawn{seed: seed, m: m, key: types.NamespacedName{Namespace: fmt.Sprintf("m%d", seed), Name: "gw"}}
		_, d.pairErr = pki.ParseKeyPair(m.Cert, m.Key)
		_, d.caErr = pki.ParseCABundle(m.CA)
		for _, o := range certgen.Objects(d.key.Namespace, "nginx", m) {
			in.Add(o)
		}
		all = append(all, d)
	}

	// Gatewall's configurations, and the material as written before.
	var configs [][]config.File
	for _, d := range all {
		tr := translate.Gateway(in, d.key)
		if tr == nil || !tr.Graph.Valid || tr.Files == nil {
			t.Fatalf("seed %d: the Gateway is refused as a whole: %+v", d.seed, tr.Graph.Conditions)
		}
		if msg := refusedWhereBrought(tr.Graph, d.pairErr == nil, d.caErr == nil); msg != "" {
			t.Errorf("seed %d (%s): %s", d.seed, strings.Join(d.m.Shapes, "; "), msg)
		}
		configs = append(configs, tr.Files, rawConfig(d.m.Cert, d.m.Key, nil), rawConfig(nil, nil, d.m.CA))
	}
	results := make([]nginxtest.Result, 0, len(configs))
	for start := 0; start < len(configs); start += certsBatch {
		rs, err := nginxtest.TestBatch(configs[start:min(start+certsBatch, len(configs))])
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, rs...)
	}

	var pieces, goAccepts, goAcceptsNginxRefuses, refused, refusedNginxLoads int
	overRefused := map[string]int{}
	for i, d := range all {
		rendered, rawPair, rawCA := results[3*i], results[3*i+1], results[3*i+2]
		if !rendered.OK {
			t.Errorf("seed %d: nginx -t rejects the configuration Gatewall rendered (-certs.seed=%d -certs.count=1):\nshapes: %s\nnginx -t said:\n%s",
				d.seed, d.seed, strings.Join(d.m.Shapes, "; "), rendered.Output)
		}
		for _, p := range []struct {
			name        string
			err         error
			goOK, rawOK bool
		}{
			{"tls.crt and tls.key", d.pairErr, goAcceptsPair(d.m.Cert, d.m.Key), rawPair.OK},
			{"ca.crt", d.caErr, goAcceptsBundle(d.m.CA), rawCA.OK},
		} {
			pieces++
			if p.goOK {
				goAccepts++
				if !p.rawOK {
					goAcceptsNginxRefuses++
				}
			}
			if p.err != nil {
				refused++
				if p.rawOK {
					refusedNginxLoads++
					overRefused[refusalKind(p.err)]++
				}
			}
		}
	}
	t.Logf("%d materials (%d pieces: a pair and a CA bundle each): Gatewall refused %d; Go's own checks accepted %d, of which NGINX refused %d as written before (each now refused, or re-encoded into a file NGINX loads); Gatewall refused %d that NGINX would have loaded:",
		len(all), pieces, refused, goAccepts, goAcceptsNginxRefuses, refusedNginxLoads)
	kinds := make([]string, 0, len(overRefused))
	for k := range overRefused {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("  %d × %s", overRefused[k], k)
	}
}

// refusedWhereBrought says what is wrong with where a material was
// refused: each object using a piece is usable exactly when the piece is
// accepted.
func refusedWhereBrought(g *graph.Gateway, pairOK, caOK bool) string {
	var wrong []string
	for _, l := range g.Listeners {
		want := l.Name == "http" || pairOK && (l.Name == "https" || caOK)
		if l.Valid != want {
			wrong = append(wrong, fmt.Sprintf("listener %s valid=%v, want %v: %+v", l.Name, l.Valid, want, l.Conditions))
		}
	}
	if (g.BackendClientCert != nil) != pairOK {
		wrong = append(wrong, fmt.Sprintf("backend client certificate used=%v, want %v: %+v", g.BackendClientCert != nil, pairOK, g.Conditions))
	}
	if len(g.Routes) != 1 || len(g.Routes[0].Rules) != 1 || len(g.Routes[0].Rules[0].Backends) != 1 {
		return "the route did not attach as built"
	}
	if b := g.Routes[0].Rules[0].Backends[0]; b.Valid != caOK {
		wrong = append(wrong, fmt.Sprintf("backend valid=%v, want %v: %s", b.Valid, caOK, b.Err))
	}
	return strings.Join(wrong, "; ")
}

// rawConfig loads a pair and a CA bundle as Gatewall wrote them before it
// parsed certificates: tls.crt, a newline and tls.key as one file; ca.crt
// as it was. A nil piece is left out.
func rawConfig(cert, key, ca []byte) []config.File {
	server := "listen 443 ssl;\nssl_certificate /etc/nginx/secrets/pair.pem;\nssl_certificate_key /etc/nginx/secrets/pair.pem;\n"
	pair := config.File{Path: "/etc/nginx/secrets/pair.pem", Mode: 0o600, Data: bytes.Join([][]byte{cert, key}, []byte("\n"))}
	if cert == nil {
		// A certificate NGINX loads, so that only the CA is tested.
		pair.Data = goodPair()
	}
	out := []config.File{pair}
	if ca != nil {
		server += "ssl_client_certificate /etc/nginx/secrets/ca.pem;\nssl_verify_client on;\n" +
			"location / { proxy_ssl_trusted_certificate /etc/nginx/secrets/ca.pem; proxy_ssl_verify on; proxy_pass https://10.244.0.10; }\n"
		out = append(out, config.File{Path: "/etc/nginx/secrets/ca.pem", Mode: 0o600, Data: ca})
	}
	return append(out, nginxtest.ServerConf(server))
}

// goodPair is a certificate and key NGINX loads.
func goodPair() []byte {
	c, err := certgen.Issue(certgen.Spec{Name: "good", Key: certgen.Key(certgen.P256, 0), Digest: certgen.SHA256})
	if err != nil {
		panic(err)
	}
	return append(c.PEM(), certgen.KeyPEM(c.Key, certgen.PKCS8)...)
}

// goAcceptsPair is Go's own check of a pair (what Gatewall used before).
func goAcceptsPair(cert, key []byte) bool {
	_, err := tls.X509KeyPair(cert, key)
	return err == nil
}

// goAcceptsBundle: every PEM block Go's decoder finds is a certificate Go
// parses, and nothing but space follows (what Gatewall checked before).
func goAcceptsBundle(data []byte) bool {
	n := 0
	for rest := data; ; n++ {
		b, after := pem.Decode(rest)
		if b == nil {
			return n > 0 && len(bytes.TrimSpace(rest)) == 0
		}
		if b.Type != "CERTIFICATE" {
			return false
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return false
		}
		rest = after
	}
}

// refusalKind is why pki refused a piece, without the names and numbers
// that differ between materials.
func refusalKind(err error) string {
	return numberRE.ReplaceAllString(quotedRE.ReplaceAllString(err.Error(), `"…"`), "N")
}
