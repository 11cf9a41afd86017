package graph

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
)

// resolvedRefs collects a route's backends for its ResolvedRefs condition
// (one for all its parents): the references that do not resolve, with the
// Gateway API reason of the first; and the endpoints left out of backends
// that do resolve, so that a rule answering 503 because Gatewall refused
// its endpoints never reads as fully resolved.
type resolvedRefs struct {
	reason     gatewayv1.RouteConditionReason
	unresolved []string
	refused    []string
	// notes say which valid backends' DNS names the data plane resolves.
	notes []string
	seen  map[string]bool
	// backends are every backend the condition speaks of, once each: the
	// rules' (those of weight 0 too), their mirrors' and their external
	// authorization services' (RefreshEndpoints reads them).
	backends []*Backend
}

// saw records a backend the condition speaks of.
func (c *resolvedRefs) saw(b *Backend) {
	if !slices.Contains(c.backends, b) {
		c.backends = append(c.backends, b)
	}
}

// add records a backendRef and, when it does not resolve, why.
func (c *resolvedRefs) add(b *Backend, why gatewayv1.RouteConditionReason) {
	c.saw(b)
	if !b.Valid {
		c.unresolved = append(c.unresolved, b.Err)
		if c.reason == "" {
			c.reason = why
		}
		return
	}
	c.addRefused(b)
}

// addFilter records a rule's filter that does not resolve or cannot be
// enforced (the rule answers 500), with the Gateway API reason.
func (c *resolvedRefs) addFilter(reason gatewayv1.RouteConditionReason, msg string) {
	c.unresolved = append(c.unresolved, msg)
	if c.reason == "" {
		c.reason = reason
	}
}

// addRefused records the refused endpoints of a valid backend, once per
// backend however many rules use it.
func (c *resolvedRefs) addRefused(b *Backend) {
	c.saw(b)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	for _, r := range b.Refused {
		msg := fmt.Sprintf("backendRef %s: %s", b.Name, r)
		if c.seen[msg] {
			continue
		}
		c.seen[msg] = true
		c.refused = append(c.refused, msg)
	}
	if note := nameNote(b); note != "" && !c.seen[note] {
		c.seen[note] = true
		c.notes = append(c.notes, note)
	}
}

func (c *resolvedRefs) condition() metav1.Condition {
	t := string(gatewayv1.RouteConditionResolvedRefs)
	reason := c.reason
	if reason == "" && len(c.refused) > 0 {
		reason = RouteReasonUnusableEndpoints
	}
	if reason == "" {
		return conditions.True(t, string(gatewayv1.RouteReasonResolvedRefs), strings.Join(append([]string{"All references are resolved"}, c.notes...), "; "))
	}
	return conditions.False(t, string(reason), strings.Join(append(append(append([]string(nil), c.unresolved...), c.refused...), c.notes...), "; "))
}
