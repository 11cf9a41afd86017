package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/translate"
)

// recordConfiguration sets the size of a Gateway's published configuration
// (the files of its translation t).
func recordConfiguration(gw types.NamespacedName, t *translate.Translation) {
	n := 0
	for _, f := range t.Files {
		n += len(f.Data)
	}
	metrics.ConfigurationBytes.With(metrics.Gateway(gw)).Set(float64(n))
	metrics.ConfigurationFiles.With(metrics.Gateway(gw)).Set(float64(len(t.Files)))
}

// recordRefused sets gatewall_refused_objects for a Gateway's translation:
// the Gateway, its listeners, its routes' parentRefs and the policies that
// have it as an ancestor (every kind of policy.Kinds) that are not accepted.
func recordRefused(t *translate.Translation) {
	g := t.Graph
	counts := map[[2]string]int{}
	add := func(kind string, conds []metav1.Condition) {
		for _, c := range conds {
			if c.Type == "Accepted" && c.Status == metav1.ConditionFalse {
				counts[[2]string{kind, c.Reason}]++
			}
		}
	}
	add("Gateway", g.Conditions)
	for _, l := range g.Listeners {
		add("Listener", l.Conditions)
	}
	for _, s := range g.ListenerSets {
		for _, l := range s.Listeners {
			add("Listener", l.Conditions)
		}
	}
	for _, r := range g.Routes {
		for _, p := range r.Parents {
			add(r.Kind, p.Conditions)
		}
	}
	for kind, r := range t.Policies {
		for _, o := range r.PolicyOutcomes() {
			add(kind, []metav1.Condition{o.Accepted})
		}
	}
	metrics.Refused.DeletePartialMatch(metrics.Gateway(g.Key))
	for k, n := range counts {
		metrics.Refused.WithLabelValues(g.Key.Namespace, g.Key.Name, k[0], k[1]).Set(float64(n))
	}
}
