package graph

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// at is a creation time, minutes after a fixed one.
func at(minutes int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, minutes, 0, 0, time.UTC))
}

func snippetsFilter(name string, minutes int, snippets ...v1alpha1.Snippet) *v1alpha1.SnippetsFilter {
	return &v1alpha1.SnippetsFilter{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: at(minutes)},
		Spec: v1alpha1.SnippetsFilterSpec{Snippets: snippets}}
}

func snippetsPolicy(ns, name string, minutes int, gateway string, snippets ...v1alpha1.Snippet) *v1alpha1.SnippetsPolicy {
	return &v1alpha1.SnippetsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at(minutes)},
		Spec: v1alpha1.SnippetsPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: gatewayv1.ObjectName(gateway)}},
			Snippets:   snippets,
		}}
}

func loc(value string) v1alpha1.Snippet {
	return v1alpha1.Snippet{Context: v1alpha1.NginxContextHTTPServerLocation, Value: value}
}

func zones(value string) v1alpha1.Snippet {
	return v1alpha1.Snippet{Context: v1alpha1.NginxContextHTTP, Value: value}
}

// snippetsRule is a rule naming SnippetsFilters.
func snippetsRule(path string, filters ...string) gatewayv1.HTTPRouteRule {
	r := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch(path)}, BackendRefs: appRefs()}
	for _, f := range filters {
		r.Filters = append(r.Filters, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: KindSnippetsFilter, Name: gatewayv1.ObjectName(f)}})
	}
	return r
}

// TestSnippetsMeetOnTheGateway: where a Gateway's policies and its rules'
// filters meet, the policies win, the older policy wins, the older filter
// takes the zone budget first, and two filters of one rule must not
// repeat a directive NGINX takes once; a rule whose filters cannot be
// used answers 500 and its route says why; policies of another namespace
// or Gateway are not the Gateway's.
func TestSnippetsMeetOnTheGateway(t *testing.T) {
	in := testInput(
		testHTTPRoute("r",
			snippetsRule("/ok", "rate"),
			snippetsRule("/gzip", "gzip-off"),
			snippetsRule("/two", "rate", "rate-again"),
			snippetsRule("/big", "big"),
		),
		snippetsPolicy("ns", "old", 1, "gw", loc("gzip on;")),
		snippetsPolicy("ns", "new", 2, "gw", loc("gzip off;")),
		snippetsPolicy("ns", "zones", 3, "gw", zones("limit_conn_zone $remote_addr zone=a:64m; limit_conn_zone $server_name zone=b:64m;")),
		snippetsPolicy("other", "elsewhere", 0, "gw", loc("gzip on;")),
		snippetsPolicy("ns", "other-gateway", 0, "gw2", loc("gzip on;")),
		snippetsFilter("rate", 10, loc("limit_rate 1k;")),
		snippetsFilter("rate-again", 11, loc("limit_rate 2k;")),
		snippetsFilter("gzip-off", 12, loc("gzip off;")),
		snippetsFilter("big", 13, zones("limit_conn_zone $remote_addr zone=z:64m;"), loc("limit_conn z 1;")),
	)
	in.Snippets = true
	g := buildTest(t, in)

	var names []string
	verdicts := map[string]string{}
	for _, p := range g.Snippets.Policies {
		names = append(names, p.Policy.Name)
		if p.Refused != nil {
			verdicts[p.Policy.Name] = p.Refused.Reason + ": " + p.Refused.Message
		}
	}
	if got := strings.Join(names, " "); got != "old new zones" {
		t.Errorf("the Gateway's policies are %q, want old new zones, oldest first", got)
	}
	if v := verdicts["new"]; !strings.HasPrefix(v, "Conflicted: on Gateway ns/gw, SnippetsPolicy ns/old, which is older, already has \"gzip\"") {
		t.Errorf("the newer gzip policy: %q", v)
	}
	if v, ok := verdicts["old"]; ok {
		t.Errorf("the older policy is refused: %s", v)
	}

	rules := g.Routes[0].Rules
	if f := rules[0].Filters; f.Error != "" || len(f.Snippets) != 1 {
		t.Errorf("/ok: error %q, %d filters", f.Error, len(f.Snippets))
	}
	for i, want := range map[int]string{
		1: `SnippetsFilter ns/gzip-off has "gzip" in its http.server.location snippet, which SnippetsPolicy ns/old of the Gateway has`,
		2: `SnippetsFilter ns/rate-again has "limit_rate" in its http.server.location snippet, which SnippetsFilter ns/rate has`,
		3: "SnippetsFilter ns/big: its zones (64m) would take Gateway ns/gw over its budget of 128m for snippets' zones (older ones have SnippetsPolicy ns/zones 128m)",
	} {
		f := rules[i].Filters
		if !strings.Contains(f.Error, want) || f.Snippets != nil {
			t.Errorf("rule %d: error %q, filters %v; want it to answer 500 for %q", i, f.Error, f.Snippets, want)
		}
	}
	rr := g.Routes[0].resolvedRefs
	if rr.Status != metav1.ConditionFalse || rr.Reason != string(RouteReasonInvalidFilter) || !strings.Contains(rr.Message, "spec.rules[3]: SnippetsFilter ns/big") {
		t.Errorf("ResolvedRefs %s %s: %s", rr.Status, rr.Reason, rr.Message)
	}
}

// TestSnippetsOfARuleAnswering500: a rule that answers 500 for another
// of its filters (a missing one) carries no snippets and takes none of
// the zone budget.
func TestSnippetsOfARuleAnswering500(t *testing.T) {
	rule := snippetsRule("/a", "big")
	rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterExtensionRef,
		ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: KindSnippetsFilter, Name: "missing"}})
	in := testInput(testHTTPRoute("r", rule, snippetsRule("/b", "other-big")),
		snippetsFilter("big", 1, zones("limit_conn_zone $remote_addr zone=z:64m; limit_conn_zone $server_name zone=y:64m;")),
		snippetsFilter("other-big", 2, zones("limit_conn_zone $remote_addr zone=z:64m; limit_conn_zone $server_name zone=y:64m;")))
	in.Snippets = true
	g := buildTest(t, in)
	if f := g.Routes[0].Rules[0].Filters; !strings.Contains(f.Error, "SnippetsFilter ns/missing not found") || f.Snippets != nil {
		t.Errorf("the rule naming a missing filter: error %q, filters %v", f.Error, f.Snippets)
	}
	if f := g.Routes[0].Rules[1].Filters; f.Error != "" || len(f.Snippets) != 1 {
		t.Errorf("the other rule, whose filter's zones fit the budget the first did not take: error %q, filters %v", f.Error, f.Snippets)
	}
}

// TestSnippetsDisabled: without --snippets a policy is refused for it and
// a rule naming a filter answers 500, whatever their snippets.
func TestSnippetsDisabled(t *testing.T) {
	in := testInput(testHTTPRoute("r", snippetsRule("/a", "f")),
		snippetsPolicy("ns", "p", 1, "gw", loc("gzip on;")),
		snippetsFilter("f", 1, loc("gzip on;")))
	g := buildTest(t, in)
	if p := g.Snippets.Policies[0]; p.Refused == nil || p.Refused.Reason != v1alpha1.SnippetsReasonDisabled {
		t.Errorf("the policy: %+v", p.Refused)
	}
	if f := g.Routes[0].Rules[0].Filters; !strings.Contains(f.Error, "is not accepted: "+SnippetsDisabled) || f.Snippets != nil {
		t.Errorf("the rule: error %q, filters %v", f.Error, f.Snippets)
	}
	ef := ResolveExtensionFilter(in, KindSnippetsFilter, key("ns", "f"))
	if !ef.Invalid || ef.Reason != v1alpha1.SnippetsReasonDisabled {
		t.Errorf("the filter: %+v", ef)
	}
}
