package controller

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/translate"
)

// recordConfiguration sets the size of a Gateway's published configuration.
func recordConfiguration(gw types.NamespacedName, files []config.File) {
	n := 0
	for _, f := range files {
		n += len(f.Data)
	}
	metrics.ConfigurationBytes.With(metrics.Gateway(gw)).Set(float64(n))
	metrics.ConfigurationFiles.With(metrics.Gateway(gw)).Set(float64(len(files)))
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

// updateStatus writes obj's status and counts the write
// (gatewall_status_writes_total). Every status Gatewall writes goes
// through it or countStatusWrite.
func updateStatus(ctx context.Context, c client.StatusClient, obj client.Object) error {
	err := c.Status().Update(ctx, obj)
	countStatusWrite(obj, err)
	return err
}

// countStatusWrite counts a status write's result.
func countStatusWrite(obj client.Object, err error) {
	result := metrics.WriteWritten
	switch {
	case apierrors.IsConflict(err):
		result = metrics.WriteConflict
	case err != nil:
		result = metrics.WriteFailed
	}
	metrics.StatusWrites.WithLabelValues(kindOf(obj), result).Inc()
}

// kindOf is an object's kind, from its Go type (typed objects read from
// the cache carry no TypeMeta).
func kindOf(obj client.Object) string {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
