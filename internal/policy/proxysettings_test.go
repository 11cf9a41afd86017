package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// TestCheckGRPC: grpc_buffer_size is allocated for every request; bufferSize
// has the same bound under grpc_pass as under proxy_pass.
func TestCheckGRPC(t *testing.T) {
	for _, c := range []struct {
		size string
		ok   bool
	}{{"4k", true}, {"1m", true}, {"1024m", true}, {"1025m", false}, {"99999999999m", false}} {
		s, err := parseSized(v1alpha1.Size(c.size))
		if err != nil {
			t.Fatal(err)
		}
		err = checkGRPC(Buffering{BufferSize: s})
		if (err == nil) != c.ok {
			t.Errorf("bufferSize %s: %v; want accepted %v", c.size, err, c.ok)
		}
	}
	if err := checkGRPC(Buffering{}); err != nil {
		t.Errorf("no bufferSize: %v", err)
	}
}

// TestVerdictOutcome: a policy's outcome for one Gateway gathers what
// happened on each of its targets there; no target's message replaces
// another's.
func TestVerdictOutcome(t *testing.T) {
	route := func(name string) graph.ObjectRef {
		return graph.ObjectRef{Kind: "HTTPRoute", Key: types.NamespacedName{Namespace: "default", Name: name}}
	}
	refused := func(name string) targetIssue {
		return targetIssue{target: route(name), refused: true, msg: "NGINX would reject the effective proxy settings of " + route(name).String()}
	}
	disabled := func(name string) targetIssue {
		return targetIssue{target: route(name), disabled: true, msg: PartiallyInvalidDisabledMessage}
	}
	cases := []struct {
		name                 string
		v                    verdict
		accepted             bool
		acceptedMsg, partial []string // substrings, in order
	}{
		{name: "applied everywhere", v: verdict{targets: 2}, accepted: true},
		{name: "one target, refused", v: verdict{targets: 1, issues: []targetIssue{refused("r1")}},
			acceptedMsg: []string{"HTTPRoute default/r1"}},
		{name: "refused on every target: every reason", v: verdict{targets: 2, issues: []targetIssue{refused("r1"), refused("r2")}},
			acceptedMsg: []string{"HTTPRoute default/r1", "; ", "HTTPRoute default/r2"}},
		{name: "refused on one of two targets", v: verdict{targets: 2, issues: []targetIssue{refused("r1")}}, accepted: true,
			partial: []string{"Policy is not fully programmed: nothing of it is configured on HTTPRoute default/r1: NGINX would reject"}},
		{name: "one target, moot sizes: the proposal's message", v: verdict{targets: 1, issues: []targetIssue{disabled("r1")}}, accepted: true,
			partial: []string{PartiallyInvalidDisabledMessage}},
		{name: "several targets: each problem, named", v: verdict{targets: 3, issues: []targetIssue{disabled("r1"), refused("r2")}}, accepted: true,
			partial: []string{"on HTTPRoute default/r1, buffer size fields", "; nothing of it is configured on HTTPRoute default/r2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acc, partial := c.v.outcome()
			if (acc.Status == "True") != c.accepted {
				t.Fatalf("Accepted = %s/%s %q; want accepted %v", acc.Status, acc.Reason, acc.Message, c.accepted)
			}
			if !c.accepted && acc.Reason != "Invalid" {
				t.Errorf("reason %s; want Invalid", acc.Reason)
			}
			inOrder(t, "Accepted message", acc.Message, c.acceptedMsg)
			inOrder(t, "partial message", partial, c.partial)
			if len(c.partial) == 0 && partial != "" {
				t.Errorf("partial message %q; want none", partial)
			}
		})
	}
}

func inOrder(t *testing.T, what, s string, parts []string) {
	t.Helper()
	rest := s
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("%s %q: %q missing or out of order", what, s, p)
			return
		}
		rest = rest[i+len(p):]
	}
}

// TestPinnedDefaults: once any proxy buffer size is rendered for a Gateway,
// the page-dependent defaults CheckProxy assumed (4 KiB pages) are written
// out for what the Gateway leaves unset, so larger-page data planes apply
// exactly what was checked; without a size, nothing is pinned.
func TestPinnedDefaults(t *testing.T) {
	size := func(s string) *sized {
		z, err := parseSized(v1alpha1.Size(s))
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	route := graph.ObjectRef{Kind: "HTTPRoute", Key: types.NamespacedName{Namespace: "default", Name: "r"}}
	off := true
	cases := []struct {
		name string
		gw   Buffering
		res  Result
		want []string
	}{
		{name: "no policy", want: nil},
		{name: "only buffering off", gw: Buffering{Disable: &off}, res: Result{HTTP: []config.Directive{config.D("proxy_buffering", "off")}}, want: nil},
		{name: "a route's buffers under NGINX's defaults",
			res:  Result{Routes: map[graph.ObjectRef][]config.Directive{route: proxyDirectives(Buffering{Buffers: &buffers{number: 4, size: *size("4k")}})}},
			want: []string{"proxy_buffer_size 4k;", "proxy_buffers 8 4k;"}},
		{name: "the Gateway sets bufferSize: only proxy_buffers is pinned",
			gw:   Buffering{BufferSize: size("8k")},
			res:  Result{HTTP: proxyDirectives(Buffering{BufferSize: size("8k")})},
			want: []string{"proxy_buffers 8 4k;"}},
		{name: "the Gateway sets both: nothing to pin",
			gw:   Buffering{BufferSize: size("8k"), Buffers: &buffers{number: 4, size: *size("8k")}},
			res:  Result{HTTP: proxyDirectives(Buffering{BufferSize: size("8k"), Buffers: &buffers{number: 4, size: *size("8k")}})},
			want: nil},
	}
	for _, c := range cases {
		got := lines(pinnedDefaults(c.gw, &c.res))
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: pinned %q, want %q", c.name, got, c.want)
		}
	}
}
