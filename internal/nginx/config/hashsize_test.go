package config_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// longHost returns a valid hostname of exactly n characters (n >= 14).
func longHost(n int) string {
	const suffix = ".example.com"
	var labels []string
	for rest := n - len(suffix); rest > 0; {
		l := min(rest, 60)
		if rest-l == 1 { // a label cannot be followed by an empty one
			l--
		}
		labels = append(labels, strings.Repeat("a", l))
		rest -= l + 1
		if rest == 0 { // the dot before the suffix was counted
			break
		}
	}
	h := strings.Join(labels, ".") + suffix
	return h[len(h)-n:]
}

// hostsInput is a Gateway with an HTTP and an HTTPS listener for host (the
// HTTPS one puts it in a hostnames map) and a route serving it.
func hostsInput(t *testing.T, host string) *graph.Input {
	t.Helper()
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.IssueServing("long", nil, []string{host})
	if err != nil {
		t.Fatal(err)
	}
	in := graph.NewInput("gatewall.test/controller")
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "gatewall.test/controller"}})
	h := gatewayv1.Hostname(host)
	in.Add(&gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "c", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: &h},
			{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: &h, TLS: &gatewayv1.ListenerTLSConfig{
				CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}},
			}},
		}},
	})
	in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cert"}, Data: map[string][]byte{
		corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM,
	}})
	in.Add(&gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules: []gatewayv1.HTTPRouteRule{{Filters: []gatewayv1.HTTPRouteFilter{{
				Type:            gatewayv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(302)},
			}}}}},
	})
	return in
}

// TestLongHostnamesPassNginx: hostnames up to the DNS limit render
// configurations NGINX accepts without a warning; without the bucket sizes
// Gatewall adds for the server names and the hostnames map, NGINX rejects
// the long ones (so the sizes are what makes them pass).
func TestLongHostnamesPassNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{46, 47, 54, 55, 118, 119, 253} {
		host := longHost(n)
		if len(host) != n {
			t.Fatalf("longHost(%d) is %d long", n, len(host))
		}
		g := graph.Build(hostsInput(t, host), types.NamespacedName{Namespace: "ns", Name: "gw"})
		if !g.Valid || len(g.Routes) != 1 || !g.Routes[0].Parents[0].Attached() {
			t.Fatalf("%d: the Gateway or its route is not valid: %+v", n, g.Conditions)
		}
		files := config.Build(g, config.Includes{}).Files()
		checkNoWarnings(t, fmt.Sprintf("hostname of %d characters", n), files)
		stripped, removed := withoutLines(files, "server_names_hash_", "map_hash_")
		_, err := nginxtest.Test(stripped)
		switch {
		case n <= 46 && removed:
			t.Errorf("hostname of %d characters: bucket sizes set, but the default fits", n)
		case n > 46 && err == nil:
			t.Errorf("hostname of %d characters: NGINX accepts it without bucket sizes; the test proves nothing", n)
		}
	}
}

// checkNoWarnings runs nginx -t on files: it must accept them and log no warning.
func checkNoWarnings(t *testing.T, what string, files []config.File) {
	t.Helper()
	out, err := nginxtest.Test(files)
	if err != nil {
		t.Errorf("%s: %v\n%s", what, err, out)
		return
	}
	if ws := nginxtest.Warnings(out); len(ws) > 0 {
		t.Errorf("%s: NGINX warns:\n%s", what, strings.Join(ws, "\n"))
	}
}

// withoutLines removes the lines holding any of the words.
func withoutLines(files []config.File, words ...string) ([]config.File, bool) {
	out := make([]config.File, 0, len(files))
	removed := false
	for _, f := range files {
		var kept [][]byte
	lines:
		for _, line := range bytes.Split(f.Data, []byte("\n")) {
			for _, w := range words {
				if bytes.Contains(line, []byte(w)) {
					removed = true
					continue lines
				}
			}
			kept = append(kept, line)
		}
		f.Data = bytes.Join(kept, []byte("\n"))
		out = append(out, f)
	}
	return out, removed
}
