package graph

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// AddUnreadable records an object of the snapshot that does not decode into
// its kind, and why. Only the offline renderer's manifests hold such objects:
// the API server refuses them and a cache keeps only what decodes. An
// unreadable object is refused, never partly used: what refers to it reports
// the reason, and for the kinds Gatewall sets a status on (GatewayClass,
// Gateway, ListenerSet, the routes, the policies), the caller also adds a
// stub holding only what identifies it and what it attaches to, which the
// graph and the policies report as not accepted.
func (in *Input) AddUnreadable(ref ObjectRef, reason string) {
	if in.unreadable == nil {
		in.unreadable = map[ObjectRef]string{}
	}
	in.unreadable[ref] = reason
}

// Unreadable says why an object could not be read, in a sentence naming
// it; ok is false for objects that were read (or are absent).
func (in *Input) Unreadable(kind string, k types.NamespacedName) (msg string, ok bool) {
	ref := ObjectRef{Kind: kind, Key: k}
	reason, ok := in.unreadable[ref]
	if !ok {
		return "", false
	}
	return UnreadableMessage(ref, reason), true
}

// UnreadableMessage is the sentence that reports an object that could not
// be read, and why.
func UnreadableMessage(ref ObjectRef, reason string) string {
	return fmt.Sprintf("%s could not be read (%s), so Gatewall does not use it", ref, reason)
}

// UnreadableGrants names the ReferenceGrants of a namespace that grant
// nothing because they could not be read, or are over the Gateway API's
// limits (referenceAllowed): a reference they might have allowed is not
// permitted, and the message saying so names them. "" when there are none.
func (in *Input) UnreadableGrants(namespace string) string {
	var msgs []string
	for ref := range in.unreadable {
		if ref.Kind == "ReferenceGrant" && ref.Key.Namespace == namespace {
			msg, _ := in.Unreadable(ref.Kind, ref.Key)
			msgs = append(msgs, msg)
		}
	}
	for k, rg := range in.ReferenceGrants {
		if err := grantOverLimit(len(rg.Spec.From), len(rg.Spec.To)); k.Namespace == namespace && err != nil {
			msgs = append(msgs, fmt.Sprintf("ReferenceGrant %s grants nothing: %v", k, err))
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	sort.Strings(msgs)
	return " (" + strings.Join(msgs, "; ") + ")"
}

// missing says why a referenced object is not in the snapshot: it could
// not be read, or it is not found.
func (in *Input) missing(kind string, k types.NamespacedName) string {
	if msg, ok := in.Unreadable(kind, k); ok {
		return msg
	}
	return fmt.Sprintf("%s %s not found", kind, k)
}
