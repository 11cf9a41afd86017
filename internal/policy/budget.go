package policy

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// The budgets of one Gateway's data plane: what the policies of the teams
// sharing it may make its NGINX hold (docs/budgets.md says why these). A
// policy that would cross one is refused on that Gateway
// (PolicyReasonOverBudget), the older policies keeping what they use; the
// Gateway and every other policy are unaffected.
const (
	// RateLimitZoneBudget bounds the shared memory zones of the
	// RateLimitPolicies on a Gateway (one per rule, filled by one state per
	// client key, which clients choose).
	RateLimitZoneBudget int64 = 192 << 20
	// UpstreamZoneBudget bounds the zones UpstreamSettingsPolicies give a
	// Gateway's upstreams (zoneSize for each upstream of each Service):
	// with dynamic upstreams a zone holds one server, so little is needed.
	UpstreamZoneBudget int64 = 64 << 20
	// BodyBufferBudget bounds the request bodies one NGINX worker may hold
	// in memory: client_body_buffer_size for each of its connections.
	BodyBufferBudget int64 = 128 << 20
	// MaxBodySizeCeiling is the largest body.maxSize a route's policy may
	// set unless the Gateway's own allows more: a body larger than its
	// buffer is written to the data plane's disk.
	MaxBodySizeCeiling int64 = 1 << 30
	// nginxBodyBuffer is what a policy may always ask for as its body
	// buffer: NGINX's own default is two memory pages, 8k on x86-64 and
	// usually 16k on other 64-bit platforms.
	nginxBodyBuffer int64 = 16 << 10
)

// PolicyReasonOverBudget is the Accepted reason of a policy refused on a
// Gateway because it would take the Gateway over one of its budgets.
const PolicyReasonOverBudget gatewayv1.PolicyConditionReason = "OverBudget"

// overBudget is the Accepted=False condition of a policy over a budget.
func overBudget(msg string) *metav1.Condition {
	c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(PolicyReasonOverBudget), msg)
	return &c
}

// ledger spends a Gateway's budget on policies, oldest first.
type ledger struct {
	// what names the budget in messages ("RateLimitPolicy zones").
	what  string
	limit int64
	spent int64
	// users name the policies that spent it, and how much.
	users []string
}

// spend takes n for a policy, or says why it does not fit.
func (l *ledger) spend(policy string, n int64, g *Gateway) (string, bool) {
	if n == 0 {
		return "", true
	}
	if l.spent+n > l.limit {
		older := "no older policy uses any"
		if len(l.users) > 0 {
			older = "older policies use " + readable(l.spent) + ": " + strings.Join(l.users, ", ")
		}
		return fmt.Sprintf("its %s (%s) would take Gateway %s over its budget of %s for %s (%s)",
			l.what, readable(n), g.Key, readable(l.limit), l.what, older), false
	}
	l.spent += n
	l.users = append(l.users, policy+" "+readable(n))
	return "", true
}

// readable is a size in messages: as NGINX writes it, or in g.
func readable(n int64) string {
	if n > 0 && n%(1<<30) == 0 {
		return fmt.Sprintf("%dg", n>>30)
	}
	return human(n)
}

// policyName is a policy's namespace/name.
func policyName(p v1alpha1.Policy) string { return p.GetNamespace() + "/" + p.GetName() }

// bytesOf reads a size the policy's parse wrote (digits, k or m).
func bytesOf(s *string) int64 {
	if s == nil {
		return 0
	}
	n, err := validation.ParseByteSize(*s)
	if err != nil {
		return 0
	}
	return n
}
