package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Retry is an HTTPRoute rule's retry: NGINX passes a request that failed on
// one try (a connection error, a timeout, or an answer with one of Codes) to
// an endpoint again, within Tries tries in all.
type Retry struct {
	// Attempts is how many times the route asks that a request may be
	// retried; 0 leaves it to the Gateway's upstreams.maxTries (tries in all).
	Attempts int
	// Codes are the response statuses retried, sorted.
	Codes []int
	// Tries is how many tries a request gets in all on the Gateway being
	// built: what the route asks, within the Gateway's bound
	// (boundRetries). Connection errors count among them: a retry never
	// multiplies the Gateway's connection tries, it replaces them.
	Tries int
}

// MaxRetryAttempts bounds retry.attempts: each try may take the route's
// backendRequest timeout, and a request's tries all count against its
// endpoints.
const MaxRetryAttempts = 10

// boundRetries settles how many tries each retrying rule of the Gateway's
// routes gets: what the rule asks (its attempts and one, or the Gateway's
// maxTries when it names no attempts), at most the Gateway's maxRetries
// and one. Every try of a request is one more request to a backend, maybe
// to an address outside the cluster that a tenant's EndpointSlice names, so
// the Gateway's owner bounds what routes may make of one client request. A
// rule asking more is served with the bound and says so; with maxRetries 0
// the rule is served without retries.
func boundRetries(g *Gateway, routes []*Route) {
	maxTries, maxRetries := v1alpha2.DefaultMaxTries, v1alpha2.DefaultMaxRetries
	if u := g.NginxProxy.Upstreams; u != nil {
		maxTries = int(ptr.Deref(u.MaxTries, int32(maxTries)))
		maxRetries = int(ptr.Deref(u.MaxRetries, int32(maxRetries)))
	}
	for _, r := range routes {
		for _, rule := range r.Rules {
			if rule.Retry == nil {
				continue
			}
			if maxRetries == 0 {
				// Without the rule's retry the Gateway's own tries on
				// connection errors apply, as on any rule.
				rule.Retry = nil
				rule.Notes = append(rule.Notes, "retry is not applied: the Gateway's NginxProxy allows no retries (upstreams.maxRetries is 0)")
				continue
			}
			asked := maxTries
			if rule.Retry.Attempts > 0 {
				asked = rule.Retry.Attempts + 1
			}
			rule.Retry.Tries = min(asked, maxRetries+1)
			if rule.Retry.Tries < asked {
				rule.Notes = append(rule.Notes, fmt.Sprintf("retry is served with %d retries, not %d: the Gateway's NginxProxy allows at most %d (upstreams.maxRetries)",
					maxRetries, asked-1, maxRetries))
			}
		}
	}
}

// RetryCodes are the statuses NGINX can retry on (proxy_next_upstream
// http_<code>): the Gateway API's required 500, 502, 503 and 504, and 403,
// 404 and 429.
var RetryCodes = []int{403, 404, 429, 500, 502, 503, 504}

// httpRetry validates a rule's retry; the note says what of it NGINX
// cannot do ("" when nothing).
func httpRetry(r *gatewayv1.HTTPRouteRetry) (retry *Retry, note string, err error) {
	if r == nil {
		return nil, "", nil
	}
	retry = &Retry{}
	if r.Attempts != nil {
		switch a := *r.Attempts; {
		case a < 1:
			return nil, "", fmt.Errorf("retry.attempts: %d is less than 1", a)
		case a > MaxRetryAttempts:
			return nil, "", fmt.Errorf("retry.attempts: %d is more than %d", a, MaxRetryAttempts)
		default:
			retry.Attempts = a
		}
	}
	for _, c := range r.Codes {
		code := int(c)
		if !slices.Contains(RetryCodes, code) {
			return nil, "", fmt.Errorf("retry.codes: NGINX retries on %s only, not %d", joinInts(RetryCodes), code)
		}
		if !slices.Contains(retry.Codes, code) {
			retry.Codes = append(retry.Codes, code)
		}
	}
	slices.Sort(retry.Codes)
	if r.Backoff != nil {
		d, err := nginxDuration(string(*r.Backoff))
		if err != nil {
			return nil, "", fmt.Errorf("retry.backoff: %w", err)
		}
		if d != "" {
			note = "retry.backoff " + string(*r.Backoff) + " is not applied: NGINX retries at once, on another endpoint when the Service has one"
		}
	}
	return retry, note, nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
