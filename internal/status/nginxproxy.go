package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/validation"
)

// NginxProxy condition types and reasons.
const (
	NginxProxyAccepted   = "Accepted"
	NginxProxyProgrammed = "Programmed"
	NginxProxyReasonOK   = "Accepted"
	// NginxProxyReasonInvalid: the NginxProxy breaks its CRD's rules (or
	// could not be read) and is ignored: the Gateways using it are not
	// accepted (InvalidParameters).
	NginxProxyReasonInvalid = "Invalid"
)

// NginxProxy returns an NginxProxy's status, decided from the object
// alone: Accepted, or Accepted=False with reason Invalid and why (a stub
// of an object that does not decode, marked graph.UnreadableAnnotation,
// or what Go's re-validation refuses: the Gateways that use it then say
// InvalidParameters); and, for an accepted one with settings the data
// plane does not carry out (graph.NotProgrammed: NGINX Plus's, or what
// Debian's NGINX has no module for), Programmed=False, PartiallyInvalid,
// naming each field and why. Whether a Gateway's data plane applied the
// rest is that Gateway's Programmed condition. old keeps the transition
// time of a condition that did not change. The manager writes it and
// gatewall render reports it, from this one function.
func NginxProxy(np *v1alpha2.NginxProxy, old v1alpha2.NginxProxyStatus, now metav1.Time) v1alpha2.NginxProxyStatus {
	return v1alpha2.NginxProxyStatus{
		Conditions: conditions.Merge(old.Conditions, nginxProxyConditions(np), np.Generation, now),
	}
}

func nginxProxyConditions(np *v1alpha2.NginxProxy) []metav1.Condition {
	if reason, unreadable := np.Annotations[graph.UnreadableAnnotation]; unreadable {
		ref := graph.ObjectRef{Kind: "NginxProxy", Key: types.NamespacedName{Namespace: np.Namespace, Name: np.Name}}
		return []metav1.Condition{conditions.False(NginxProxyAccepted, NginxProxyReasonInvalid, graph.UnreadableMessage(ref, reason))}
	}
	if errs := validation.NginxProxy(np); len(errs) > 0 {
		return []metav1.Condition{conditions.False(NginxProxyAccepted, NginxProxyReasonInvalid,
			fmt.Sprintf("NginxProxy is invalid and is ignored: %s", errs.ToAggregate()))}
	}
	if notes := graph.NotProgrammed(&np.Spec); len(notes) > 0 {
		return []metav1.Condition{
			conditions.True(NginxProxyAccepted, NginxProxyReasonOK, "NginxProxy is accepted, but the data plane does not carry out all of its settings (see Programmed)"),
			conditions.False(NginxProxyProgrammed, v1alpha1.PolicyReasonPartiallyInvalid, "every setting is programmed but: "+strings.Join(notes, "; ")),
		}
	}
	return []metav1.Condition{conditions.True(NginxProxyAccepted, NginxProxyReasonOK, "NginxProxy is accepted")}
}
