package graph

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// statusRead are the policy kinds whose status translation reads, with
// what it reads of it: a WAFGatewayBindingPolicy's records of the bundles
// in force, not its conditions (which Gatewall writes from translations).
var statusRead = map[string]func(v1alpha1.Policy) any{
	"WAFGatewayBindingPolicy": func(p v1alpha1.Policy) any {
		w, ok := p.(*v1alpha1.WAFGatewayBindingPolicy)
		if !ok {
			return nil
		}
		return []any{w.Status.APPolicyStatus, w.Status.APLogConfStatus}
	},
}

// PolicyVersion is the version of a policy of a kind as translation sees
// it: its UID and generation, and for a kind whose status translation
// reads, the digest of what it reads there. Two translations of inputs
// with the same version of a policy decide the same for it when nothing
// else changed; Fingerprint counts policies the same way.
func PolicyVersion(kind string, o metav1.Object) string {
	v := fmt.Sprintf("%s/g%d", o.GetUID(), o.GetGeneration())
	if read, ok := statusRead[kind]; ok {
		p, _ := o.(v1alpha1.Policy)
		v += "/" + statusDigest(read, p)
	}
	return v
}

// statusDigest is the digest of what translation reads of a policy's
// status ("" for an object that is not a policy).
func statusDigest(read func(v1alpha1.Policy) any, p v1alpha1.Policy) string {
	if p == nil {
		return ""
	}
	b, err := json.Marshal(read(p))
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// PolicyVersions are the versions (PolicyVersion) of every policy of the
// input, BackendTLSPolicies included: what a translation of it saw of each.
func (in *Input) PolicyVersions() map[ObjectRef]string {
	out := map[ObjectRef]string{}
	for kind, ps := range in.Policies {
		for key, p := range ps {
			out[ObjectRef{Kind: kind, Key: key}] = PolicyVersion(kind, p)
		}
	}
	for key, p := range in.BackendTLSPolicies {
		out[ObjectRef{Kind: KindBackendTLSPolicy, Key: key}] = PolicyVersion(KindBackendTLSPolicy, p)
	}
	return out
}

// PolicyVersionOf is the version (PolicyVersion) of the input's copy of a
// policy; false when the input has none.
func (in *Input) PolicyVersionOf(ref ObjectRef) (string, bool) {
	if ref.Kind == KindBackendTLSPolicy {
		p, ok := in.BackendTLSPolicies[ref.Key]
		if !ok {
			return "", false
		}
		return PolicyVersion(ref.Kind, p), true
	}
	p, ok := in.Policies[ref.Kind][ref.Key]
	if !ok {
		return "", false
	}
	return PolicyVersion(ref.Kind, p), true
}
