package config_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// passthroughInput is httpInput's Gateway with, on port 443, an HTTPS
// listener for web.example.com and a TLS passthrough listener for
// *.<suffix>, and TLSRoutes for each of hosts (under suffix) to the Service
// app; every other one also shares its connections with a missing Service.
func passthroughInput(t *testing.T, suffix string, hosts ...string) *graph.Input {
	t.Helper()
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.IssueServing("web", nil, []string{"web.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	in := httpInput()
	gw := in.Gateways[testGateway]
	gw.Spec.Listeners = append(gw.Spec.Listeners,
		gatewayv1.Listener{Name: "web", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To[gatewayv1.Hostname]("web.example.com"),
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}},
		gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("*." + suffix)),
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cert"}, Data: map[string][]byte{
		corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM,
	}})
	in.Add(httpRoute("web", []gatewayv1.Hostname{"web.example.com"}, gatewayv1.HTTPRouteRule{}))
	app := appRef[0].BackendRef
	missing := gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "missing", Port: ptr.To[gatewayv1.PortNumber](443)}}
	for i, h := range hosts {
		refs := []gatewayv1.BackendRef{app}
		if i%2 == 1 {
			refs = append(refs, missing)
		}
		in.Add(&gatewayv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("tls-%d", i)},
			Spec: gatewayv1.TLSRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To[gatewayv1.SectionName]("pass")}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(h)},
				Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: refs}},
			},
		})
	}
	return in
}

// TestTLSPassthroughHostnamesPassNginx: the map of server names of a TLS
// passthrough port is sized as the http maps are: hostnames up to the DNS
// limit, and many of them, give a configuration NGINX accepts without a
// warning, and without the stream map's sizes it refuses the long ones.
func TestTLSPassthroughHostnamesPassNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	many := make([]string, 2000)
	for i := range many {
		many[i] = fmt.Sprintf("host-%05d.pass.example.com", i)
	}
	cases := []struct {
		name   string
		suffix string
		hosts  []string
		sized  bool // without the stream's map_hash_ sizes NGINX complains
	}{
		{"one short hostname", "pass.example.com", []string{"a.pass.example.com"}, false},
		{"a hostname of 253 characters", "example.com", []string{longHost(253)}, true},
		{"2,000 hostnames", "pass.example.com", many, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.Build(passthroughInput(t, c.suffix, c.hosts...), testGateway)
			for _, r := range g.Routes {
				if !r.Parents[0].Attached() {
					t.Fatalf("%s %s is not attached: %+v", r.Kind, r.Key, r.Parents[0].Conditions)
				}
			}
			cfg := config.Build(g, config.Includes{})
			files := cfg.Files()
			checkNoWarnings(t, c.name, files)
			stream := fileData(t, cfg, config.StreamConfPath)
			if has := strings.Contains(string(stream), "map_hash_"); has != c.sized {
				t.Errorf("stream.conf sets map_hash_ sizes: %v, want %v", has, c.sized)
			}
			if !c.sized {
				return
			}
			stripped, _ := withoutLines(files, "map_hash_")
			out, err := nginxtest.Test(stripped)
			if err == nil && len(nginxtest.Warnings(out)) == 0 {
				t.Errorf("without the map_hash_ sizes NGINX neither fails nor warns: the case proves nothing")
			}
		})
	}
}

// passthroughTwoRoutes is passthroughInput with two routes: one
// to app alone, one sharing with a missing Service.
func passthroughTwoRoutes(t *testing.T) *graph.Input {
	return passthroughInput(t, "pass.example.com", "a.pass.example.com", "b.pass.example.com")
}

// weightedTLSRoutes is httpInput's Gateway with a passthrough listener on
// port 443 and n TLSRoutes, each sharing its connections between app and
// other by weights of its own (app's share grows with i, the total stays
// n+1): n splits in the stream context.
func weightedTLSRoutes(n int) *graph.Input {
	objs := service("ns", "other", 80, "10.0.0.2")
	for i := range n {
		objs = append(objs, &gatewayv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("w-%04d", i)},
			Spec: gatewayv1.TLSRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To[gatewayv1.SectionName]("pass")}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("w%04d.pass.example.com", i))},
				Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{
					{BackendObjectReference: appRef[0].BackendObjectReference, Weight: ptr.To(int32(i + 1))},
					{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "other", Port: ptr.To[gatewayv1.PortNumber](80)}, Weight: ptr.To(int32(n - i))},
				}}},
			},
		})
	}
	in := httpInput(objs...)
	gw := in.Gateways[testGateway]
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
		Hostname: ptr.To[gatewayv1.Hostname]("*.pass.example.com"), TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	return in
}

// TestStreamVariablesHashIsSized: the stream context's variables (a split
// per weighted TLSRoute, with the whole digest in its name when digests
// collide) are sized as the http context's are: NGINX accepts them
// without a warning, and without the stream's variables_hash_ sizes it
// warns or refuses them ("could not build variables_hash").
func TestStreamVariablesHashIsSized(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		routes int
		// long gives every split the name a collision of digests gives it.
		long bool
	}{
		{"400 weighted TLSRoutes", 400, false},
		{"64 weighted TLSRoutes with the longest names", 64, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := build(t, weightedTLSRoutes(c.routes))
			if len(cfg.StreamSplits) != c.routes {
				t.Fatalf("want %d splits, got %d", c.routes, len(cfg.StreamSplits))
			}
			if c.long {
				lengthenSplitNames(cfg)
			}
			files := cfg.Files()
			checkNoWarnings(t, c.name, files)
			stripped, _ := withoutLines(files, "variables_hash_")
			out, err := nginxtest.Test(stripped)
			if err == nil && len(nginxtest.Warnings(out)) == 0 {
				t.Errorf("without the variables_hash_ sizes NGINX neither fails nor warns: the case proves nothing")
			}
		})
	}
}

// lengthenSplitNames renames the stream's splits as a collision of their
// short digests does: with the whole SHA-256 digest (64 hex digits).
func lengthenSplitNames(cfg *config.Config) {
	renamed := map[string]string{}
	for i, s := range cfg.StreamSplits {
		long := fmt.Sprintf("%s%052x", s.Variable, i)
		renamed[s.Variable], s.Variable = long, long
	}
	for _, p := range cfg.TLSPasses {
		if long, ok := renamed[p.Target]; ok {
			p.Target = long
		}
	}
}
