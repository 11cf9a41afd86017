package policy

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// Values the CRD's patterns and enums allow, at their edges, and some they
// do not (as if the API server's rules were bypassed).
var (
	usZones   = []string{"0", "8k", "31k", "32k", "64k", "1m", "9999k", "1024m", "1g", "2g", "1G"}
	usKeys    = []string{"$remote_addr", "$binary_remote_addr", "$request_uri", "$arg_user", "$http_x_user", "$cookie_id", "$request_id", "$nope", "$http_"}
	usMethods = append([]string{"bogus"}, validation.LoadBalancingMethods...)
)

func randomUpstreamSettingsPolicy(r *rand.Rand) *v1alpha1.UpstreamSettingsPolicy {
	pick := func(vs []string) string { return vs[r.Intn(len(vs))] }
	maybe := func() bool { return r.Intn(2) == 0 }
	p := &v1alpha1.UpstreamSettingsPolicy{Spec: v1alpha1.UpstreamSettingsPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Kind: "Service", Name: "app"}}}}
	p.Namespace, p.Name = "default", "p"
	s := &p.Spec
	if maybe() {
		s.ZoneSize = ptr.To(v1alpha1.ByteSize(pick(usZones)))
	}
	if maybe() {
		k := &v1alpha1.UpstreamKeepAlive{}
		if maybe() {
			k.Connections = ptr.To([]int32{0, 16, 32, validation.MaxUpstreamKeepalive, validation.MaxUpstreamKeepalive + 1, math.MaxInt32}[r.Intn(6)])
		}
		if maybe() {
			k.Requests = ptr.To(int32(r.Intn(3) * 500))
		}
		if maybe() {
			k.Time = ptr.To(v1alpha1.Duration(pick(csDurations)))
		}
		if maybe() {
			k.Timeout = ptr.To(v1alpha1.Duration(pick(csDurations)))
		}
		s.KeepAlive = k
	}
	if maybe() {
		s.LoadBalancingMethod = ptr.To(v1alpha1.LoadBalancingType(pick(usMethods)))
	}
	if maybe() {
		s.HashMethodKey = ptr.To(v1alpha1.HashMethodKey(pick(usKeys)))
	}
	return p
}

// rawUpstream writes a policy's values into an upstream as the user wrote
// them, with only Gatewall's documented conversions: a size in g is written
// in m, 0 keep-alive connections is no keepalive directive, round_robin and
// the NGINX Plus methods (which Gatewall does not apply) are no directive.
func rawUpstream(name string, p *v1alpha1.UpstreamSettingsPolicy) string {
	s := p.Spec
	var out []string
	if z := s.ZoneSize; z != nil {
		v := string(*z)
		if g, err := strconv.Atoi(strings.TrimSuffix(v, "g")); err == nil && strings.HasSuffix(v, "g") {
			v = fmt.Sprintf("%dm", g*1024)
		}
		out = append(out, "zone "+name+" "+v+";")
	}
	if m := s.LoadBalancingMethod; m != nil && *m != "round_robin" && !strings.Contains(string(*m), "least_time") {
		words := strings.Fields(string(*m))
		if words[0] == "hash" {
			key := ""
			if s.HashMethodKey != nil {
				key = string(*s.HashMethodKey)
			}
			words = append([]string{"hash", key}, words[1:]...)
		}
		out = append(out, strings.Join(words, " ")+";")
	}
	out = append(out, "server 127.0.0.1:9;")
	conns := int32(config.DefaultUpstreamKeepalive)
	if k := s.KeepAlive; k != nil {
		if k.Connections != nil {
			conns = *k.Connections
		}
		if k.Requests != nil {
			out = append(out, fmt.Sprintf("keepalive_requests %d;", *k.Requests))
		}
		if k.Time != nil {
			out = append(out, "keepalive_time "+string(*k.Time)+";")
		}
		if k.Timeout != nil {
			out = append(out, "keepalive_timeout "+string(*k.Timeout)+";")
		}
	}
	if conns > 0 {
		out = append(out, fmt.Sprintf("keepalive %d;", conns))
	}
	return "upstream " + name + " { " + strings.Join(out, " ") + " }\n"
}

// upstreamUser is a server that proxies to an upstream, which NGINX needs
// to check the upstream's directives.
func upstreamUser(name string) string {
	return "server { listen 127.0.0.1:18085; server_name " + name + "; location / { proxy_pass http://" + name + "; } }\n"
}

// TestUpstreamSettingsVerdictAgainstNginx: for random policies, everything
// NGINX rejects as the user wrote it Gatewall refuses, and what Gatewall
// accepts, rendered by the configuration writer, passes real `nginx -t`.
// Gatewall refuses more: hash keys outside the allow-list, zones over 1g,
// more than 4096 keep-alive connections (NGINX allocates each slot at start:
// max int32 fails `nginx -t`), hash without a key, values outside the CRD's
// patterns and enums.
func TestUpstreamSettingsVerdictAgainstNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	var ups []*config.Upstream
	nginxRejected, refused := 0, 0
	for i := 0; i < 150; i++ {
		p := randomUpstreamSettingsPolicy(r)
		s, _, ours := parseUpstreamSettings(p)
		name := fmt.Sprintf("raw%d", i)
		theirs := nginxT(t, rawUpstream(name, p)+upstreamUser(name))
		if theirs != nil {
			nginxRejected++
			if ours == nil {
				t.Errorf("policy %d %+v: NGINX rejects it (%v), Gatewall accepts it", i, p.Spec, theirs)
			}
		}
		if ours != nil {
			refused++
			continue
		}
		name = fmt.Sprintf("u%d", i)
		ups = append(ups, &config.Upstream{Name: name, ID: config.UpstreamID(types.NamespacedName{Namespace: "ns", Name: name}, 80), Fallback: "unix:/var/run/nginx/sink-503.sock", Settings: s.config()})
	}
	if len(ups) == 0 {
		t.Fatal("no accepted policy was rendered")
	}
	// The upstreams as the configuration writer renders them, with the
	// Lua balancer their endpoints come from, in a whole configuration.
	cfg := &config.Config{Main: config.Main{WorkerConnections: 1024, ErrorLevel: "info",
		Upstreams: config.UpstreamDefaults{ConnectTimeout: time.Second, MaxTries: 3, FailTimeout: 10 * time.Second}}, Upstreams: ups}
	if out, err := nginxtest.Test(cfg.Files()); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if nginxRejected == 0 {
		t.Fatal("NGINX rejected no random policy: the generator misses NGINX's limits")
	}
	t.Logf("150 random policies: NGINX rejected %d as written, Gatewall refused %d (all of those); the %d accepted pass nginx -t together",
		nginxRejected, refused, len(ups))
}
