package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/graph"
)

// Protection is which WAF policy protects a target, and with which bundles.
type Protection struct {
	// Policy is the WAFGatewayBindingPolicy.
	Policy types.NamespacedName
	// From is the Gateway whose policy a route inherits; nil for the
	// target's own policy.
	From *types.NamespacedName
	// Bundle is the APPolicy bundle in force; Logs the APLogConf ones.
	Bundle BundleRef
	Logs   []BundleRef
	// Held: a bundle of the policy in force on the data plane is missing
	// here, and the configuration is held back (HeldBack).
	Held bool
}

func (w *WAF) protect(ref graph.ObjectRef, p Protection) {
	w.Affected[ref] = true
	w.Protections[ref] = p
}

// AffectedMessage says which policy protects a target (its own, or the one
// it inherits from its Gateway) and with which bundle, for the target's
// WAFGatewayBindingPolicyAffected condition; "" when none does.
func (w *WAF) AffectedMessage(ref graph.ObjectRef) string {
	p, ok := w.Protections[ref]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Protected by WAFGatewayBindingPolicy %s", p.Policy)
	switch {
	case p.From != nil:
		fmt.Fprintf(&b, ", inherited from Gateway %s,", *p.From)
	case ref.Kind != "Gateway":
		b.WriteString(" (the route's own, in place of its Gateway's)")
	}
	fmt.Fprintf(&b, " with %s %s bundle sha256:%s", p.Bundle.Kind, p.Bundle.Object, p.Bundle.Sha256)
	sep := ", security logs "
	seen := map[string]bool{}
	for _, l := range p.Logs {
		if seen[l.Sha256] {
			continue // one profile, several destinations
		}
		seen[l.Sha256] = true
		fmt.Fprintf(&b, "%s%s %s bundle sha256:%s", sep, l.Kind, l.Object, l.Sha256)
		sep = ", "
	}
	if p.Held {
		b.WriteString(" (the data plane keeps enforcing what it runs: Gatewall holds the Gateway's configuration back until it has the bundles in force again)")
	}
	return b.String()
}
