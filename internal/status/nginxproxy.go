package status

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/validation"
)

// NginxProxy returns an NginxProxy's status: Accepted, or Accepted=False
// with reason Invalid and why (a stub of an object that does not decode,
// marked graph.UnreadableAnnotation, or what Go's re-validation refuses:
// the Gateways that use it then say InvalidParameters). old keeps the
// transition time of a condition that did not change. The manager writes
// it and gatewall render reports it, from this one function.
func NginxProxy(np *v1alpha2.NginxProxy, old v1alpha2.NginxProxyStatus, now metav1.Time) v1alpha2.NginxProxyStatus {
	return v1alpha2.NginxProxyStatus{
		Conditions: conditions.Merge(old.Conditions, []metav1.Condition{nginxProxyAccepted(np)}, np.Generation, now),
	}
}

func nginxProxyAccepted(np *v1alpha2.NginxProxy) metav1.Condition {
	if reason, unreadable := np.Annotations[graph.UnreadableAnnotation]; unreadable {
		ref := graph.ObjectRef{Kind: "NginxProxy", Key: types.NamespacedName{Namespace: np.Namespace, Name: np.Name}}
		return conditions.False("Accepted", "Invalid", graph.UnreadableMessage(ref, reason))
	}
	if errs := validation.NginxProxy(np); len(errs) > 0 {
		return conditions.False("Accepted", "Invalid", fmt.Sprintf("NginxProxy is invalid and is ignored: %s", errs.ToAggregate()))
	}
	return conditions.True("Accepted", "Accepted", "NginxProxy is accepted")
}
