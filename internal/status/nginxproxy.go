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

// NginxProxy returns an NginxProxy's conditions, decided from the object
// alone (the manager's NginxProxy reconciler and `gatewall render` write
// the same): Accepted, False (Invalid, with what is wrong) when it breaks
// its CRD's rules or could not be read; and, for an accepted one with
// settings the data plane does not carry out (graph.NotProgrammed: NGINX
// Plus's, or what Debian's NGINX has no module for), Programmed=False,
// PartiallyInvalid, naming each field and why. Whether a Gateway's data
// plane applied the rest is that Gateway's Programmed condition.
func NginxProxy(np *v1alpha2.NginxProxy, old []metav1.Condition, now metav1.Time) []metav1.Condition {
	var want []metav1.Condition
	if reason, unreadable := np.Annotations[graph.UnreadableAnnotation]; unreadable {
		ref := graph.ObjectRef{Kind: "NginxProxy", Key: types.NamespacedName{Namespace: np.Namespace, Name: np.Name}}
		want = append(want, conditions.False(NginxProxyAccepted, NginxProxyReasonInvalid, graph.UnreadableMessage(ref, reason)))
	} else if errs := validation.NginxProxy(np); len(errs) > 0 {
		want = append(want, conditions.False(NginxProxyAccepted, NginxProxyReasonInvalid,
			fmt.Sprintf("NginxProxy is invalid and is ignored: %s", errs.ToAggregate())))
	} else if notes := graph.NotProgrammed(&np.Spec); len(notes) > 0 {
		want = append(want,
			conditions.True(NginxProxyAccepted, NginxProxyReasonOK, "NginxProxy is accepted, but the data plane does not carry out all of its settings (see Programmed)"),
			conditions.False(NginxProxyProgrammed, v1alpha1.PolicyReasonPartiallyInvalid, notProgrammedMessage(notes)))
	} else {
		want = append(want, conditions.True(NginxProxyAccepted, NginxProxyReasonOK, "NginxProxy is accepted"))
	}
	return conditions.Merge(old, want, np.Generation, now)
}

// notProgrammedMessage says which settings the data plane leaves out and
// that it carries out the rest.
func notProgrammedMessage(notes []string) string {
	return "every setting is programmed but: " + strings.Join(notes, "; ")
}
