package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Retry is an HTTPRoute rule's retry: NGINX passes a request that failed on
// one try (a connection error, a timeout, or an answer with one of Codes) to
// an endpoint again, at most Attempts times more.
type Retry struct {
	// Attempts is how many times a request may be retried; 0 leaves it to
	// the Gateway's upstreams.maxTries (tries in all).
	Attempts int
	// Codes are the response statuses retried, sorted.
	Codes []int
}

// Tries is how many tries a request gets in all, with maxTries the
// Gateway's default.
func (r *Retry) Tries(maxTries int) int {
	if r.Attempts == 0 {
		return maxTries
	}
	return r.Attempts + 1
}

// MaxRetryAttempts bounds retry.attempts: each try may take the route's
// backendRequest timeout, and a request's tries all count against its
// endpoints.
const MaxRetryAttempts = 10

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
