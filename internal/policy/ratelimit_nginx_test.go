package policy

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// Values the NGF API allows, at NGINX's edges.
var (
	rlRates = []string{"0r/s", "1r/s", "10r/m", "999999999r/m"}
	rlSizes = []string{"1k", "31k", "32k", "64k", "10m", "1g", "2g", "9999g"}
	rlKeys  = []string{"$binary_remote_addr", "$http_x_api_key", "user:$remote_addr", "$request_body", "$nosuch", "$arg_id$uri"}
)

func randomRateLimitPolicy(r *rand.Rand, name string) *v1alpha1.RateLimitPolicy {
	pick := func(vs []string) string { return vs[r.Intn(len(vs))] }
	rule := v1alpha1.RateLimitRule{Rate: v1alpha1.Rate(pick(rlRates)), Key: pick(rlKeys)}
	if r.Intn(2) == 0 {
		rule.ZoneSize = ptr.To(v1alpha1.ByteSize(pick(rlSizes)))
	}
	if r.Intn(2) == 0 {
		rule.Burst = ptr.To(int32(r.Intn(3) * 10))
	}
	switch r.Intn(3) {
	case 0:
		rule.Delay = ptr.To(int32(r.Intn(2) * 5))
	case 1:
		rule.NoDelay = ptr.To(true)
	}
	p := &v1alpha1.RateLimitPolicy{Spec: v1alpha1.RateLimitPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
		RateLimit:  &v1alpha1.RateLimit{Local: &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{rule}}, RejectCode: ptr.To(int32(400 + r.Intn(200)))},
	}}
	p.Namespace, p.Name = "default", name
	return p
}

// rawRateLimit writes a policy's one rule into NGINX's directives as the
// user wrote it (a zero burst or delay means NGINX's default, as the API
// says), without Gatewall's checks.
func rawRateLimit(i int, p *v1alpha1.RateLimitPolicy) (zone, location string) {
	r := p.Spec.RateLimit.Local.Rules[0]
	size := "10m"
	if r.ZoneSize != nil {
		size = string(*r.ZoneSize)
		if n, err := validation.ParseByteSize(size); err == nil {
			size = human(n) // as Gatewall writes it: limit_req_zone takes no g
		}
	}
	zone = fmt.Sprintf("limit_req_zone %s zone=raw%d:%s rate=%s;", r.Key, i, size, r.Rate)
	location = fmt.Sprintf("limit_req zone=raw%d", i)
	if r.Burst != nil && *r.Burst > 0 {
		location += fmt.Sprintf(" burst=%d", *r.Burst)
	}
	if r.NoDelay != nil && *r.NoDelay {
		location += " nodelay"
	} else if r.Delay != nil && *r.Delay > 0 {
		location += fmt.Sprintf(" delay=%d", *r.Delay)
	}
	return zone, location + "; limit_req_status " + fmt.Sprint(*p.Spec.RateLimit.RejectCode) + ";"
}

// TestRateLimitVerdictAgainstNginx: for random policies, whatever NGINX
// rejects Gatewall refuses (NGINX never gets a configuration it rejects),
// and everything Gatewall accepts passes real `nginx -t` as rendered. Gatewall
// refuses more than NGINX does: key variables outside its allow-list.
func TestRateLimitVerdictAgainstNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(4))
	var accepted []RateLimits
	nginxRejected, refused := 0, 0
	for i := 0; i < 150; i++ {
		p := randomRateLimitPolicy(r, fmt.Sprintf("p%d", i))
		s, _, ours := parseRateLimits(p)
		zone, loc := rawRateLimit(i, p)
		theirs := nginxT(t, zone+fmt.Sprintf("\nserver { listen 127.0.0.1:18085; server_name raw%d; location / { %s return 204; } }\n", i, loc))
		if theirs != nil {
			nginxRejected++
			if ours == nil {
				t.Errorf("policy %d %+v: NGINX rejects it (%v), Gatewall accepts it", i, p.Spec.RateLimit.Local.Rules[0], theirs)
			}
		}
		if ours != nil {
			refused++
			continue
		}
		accepted = append(accepted, s)
	}
	var conf strings.Builder
	conf.WriteString(strings.Join(lines(zones(accepted)), "\n") + "\n")
	for i, s := range accepted {
		fmt.Fprintf(&conf, "server { listen 127.0.0.1:18086; server_name ok%d; location / { %s return 204; } }\n", i, strings.Join(lines(s.directives()), " "))
	}
	if err := nginxT(t, conf.String()); err != nil {
		t.Fatal(err)
	}
	if nginxRejected == 0 || len(accepted) == 0 {
		t.Fatalf("the random policies did not cover both sides: %d rejected by NGINX, %d accepted by Gatewall", nginxRejected, len(accepted))
	}
	t.Logf("150 random policies: NGINX rejected %d, Gatewall refused %d (all of NGINX's), %d accepted pass nginx -t", nginxRejected, refused, len(accepted))
}
