package policy

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// Values the CRD's patterns allow, at their edges.
var (
	csSizes     = []string{"0", "1", "1023", "8k", "9999k", "1m", "10m", "9999m", "1g", "9999g"}
	csDurations = []string{"0", "1", "500ms", "9999ms", "30s", "9999s", "5m", "1h", "9999h"}
)

func randomClientSettingsPolicy(r *rand.Rand) *v1alpha1.ClientSettingsPolicy {
	pick := func(vs []string) string { return vs[r.Intn(len(vs))] }
	maybe := func() bool { return r.Intn(2) == 0 }
	p := &v1alpha1.ClientSettingsPolicy{Spec: v1alpha1.ClientSettingsPolicySpec{
		TargetRef: gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}}}
	p.Namespace, p.Name = "default", "p"
	if maybe() {
		b := &v1alpha1.ClientBody{}
		if maybe() {
			b.MaxSize = ptr.To(v1alpha1.ByteSize(pick(csSizes)))
		}
		if maybe() {
			b.BufferSize = ptr.To(v1alpha1.ByteSize(pick(csSizes)))
		}
		if maybe() {
			b.Timeout = ptr.To(v1alpha1.Duration(pick(csDurations)))
		}
		p.Spec.Body = b
	}
	if maybe() {
		k := &v1alpha1.ClientKeepAlive{}
		if maybe() {
			k.Requests = ptr.To(int32(r.Intn(3) * 500))
		}
		if maybe() {
			k.Time = ptr.To(v1alpha1.Duration(pick(csDurations)))
		}
		if maybe() {
			k.Timeout = &v1alpha1.ClientKeepAliveTimeout{Server: ptr.To(v1alpha1.Duration(pick(csDurations)))}
			if maybe() {
				k.Timeout.Header = ptr.To(v1alpha1.Duration(pick(csDurations)))
			}
		}
		p.Spec.KeepAlive = k
	}
	return p
}

// clientPairConf renders a Gateway/route pair: the Gateway's settings at
// server level (inherited like http level), the route's in a location.
func clientPairConf(i int, gw, route ClientSettings) string {
	return fmt.Sprintf("server { listen 127.0.0.1:18082; server_name cpair%d; %s location / { %s proxy_pass http://127.0.0.1:9; } }\n",
		i, strings.Join(lines(gw.directives()), " "), strings.Join(lines(route.directives()), " "))
}

// TestClientSettingsVerdictMatchesNginx: for random policies, Gatewall
// refuses exactly what NGINX rejects (never less, never more), and what it
// accepts passes real `nginx -t` at http, server and location level.
func TestClientSettingsVerdictMatchesNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	refused := 0
	var accepted strings.Builder
	for i := 0; i < 200; i++ {
		p := randomClientSettingsPolicy(r)
		s, _, ours := parseClientSettings(p)
		raw := rawClientDirectives(p)
		theirs := nginxT(t, fmt.Sprintf("server { listen 127.0.0.1:18083; server_name raw%d; location / { %s return 204; } }\n", i, strings.Join(raw, " ")))
		if (ours == nil) != (theirs == nil) {
			t.Errorf("policy %d %+v: Gatewall says %v, nginx -t says %v", i, p.Spec, ours, theirs)
			continue
		}
		if ours != nil {
			refused++
			continue
		}
		accepted.WriteString(clientPairConf(i, s, s))
		accepted.WriteString("server { listen 127.0.0.1:18084; server_name h" + fmt.Sprint(i) + "; }\n")
	}
	if err := nginxT(t, accepted.String()); err != nil {
		t.Fatal(err)
	}
	if refused == 0 {
		t.Fatal("no random policy was refused: the header-in-milliseconds case was never drawn")
	}
	t.Logf("200 random policies: Gatewall and nginx -t agreed on all (%d refused by both)", refused)
}

// rawClientDirectives writes a policy's values into NGINX's directives as
// the user wrote them, without Gatewall's checks or conversions.
func rawClientDirectives(p *v1alpha1.ClientSettingsPolicy) []string {
	var out []string
	if b := p.Spec.Body; b != nil {
		if b.MaxSize != nil {
			out = append(out, "client_max_body_size "+string(*b.MaxSize)+";")
		}
		if b.BufferSize != nil {
			// Gatewall writes sizes in k or m: NGINX's size syntax has no g.
			n := string(*b.BufferSize)
			if g, err := strconv.Atoi(strings.TrimSuffix(n, "g")); err == nil && strings.HasSuffix(n, "g") {
				n = fmt.Sprintf("%dm", g*1024)
			}
			out = append(out, "client_body_buffer_size "+n+";")
		}
		if b.Timeout != nil {
			out = append(out, "client_body_timeout "+string(*b.Timeout)+";")
		}
	}
	if k := p.Spec.KeepAlive; k != nil {
		if k.Requests != nil {
			out = append(out, fmt.Sprintf("keepalive_requests %d;", *k.Requests))
		}
		if k.Time != nil {
			out = append(out, "keepalive_time "+string(*k.Time)+";")
		}
		if t := k.Timeout; t != nil && t.Server != nil {
			v := string(*t.Server)
			if t.Header != nil {
				v += " " + string(*t.Header)
			}
			out = append(out, "keepalive_timeout "+v+";")
		}
	}
	return out
}
