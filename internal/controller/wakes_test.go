package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Gateway queued by EndpointSlice changes alone reads only their
// Services' slices; queued any other way (a watch, an error's retry, a
// requeue, controller-runtime's own adds), or both, it reads everything.
func TestWakes(t *testing.T) {
	w := newWakes()
	q := w.queue(logr.Discard())("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	wq := q.(*wakeQueue)
	gw := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "gw"}}
	a, b := types.NamespacedName{Namespace: "apps", Name: "a"}, types.NamespacedName{Namespace: "apps", Name: "b"}

	if _, only := w.take(gw.NamespacedName); only {
		t.Error("a Gateway queued with nothing recorded did not read everything")
	}
	wq.addSlices(gw, b)
	wq.addSlices(gw, a)
	wq.addSlices(gw, b)
	if got, only := w.take(gw.NamespacedName); !only || !slices.Equal(got, []types.NamespacedName{a, b}) {
		t.Errorf("queued by slices alone: %v %t, want a and b, true", got, only)
	}
	if _, only := w.take(gw.NamespacedName); only {
		t.Error("what queued the Gateway was not forgotten when its reconcile began")
	}
	for name, add := range map[string]func(){
		"Add":            func() { q.Add(gw) },
		"AddAfter":       func() { q.AddAfter(gw, time.Hour) },
		"AddRateLimited": func() { q.AddRateLimited(gw) },
		"AddWithOpts":    func() { wq.AddWithOpts(priorityqueue.AddOpts{}, gw) },
	} {
		for _, order := range []string{"before", "after"} {
			if order == "before" {
				add()
			}
			wq.addSlices(gw, a)
			if order == "after" {
				add()
			}
			if _, only := w.take(gw.NamespacedName); only {
				t.Errorf("queued by %s %s a slice's change, the Gateway did not read everything", name, order)
			}
		}
	}

	var none *wakes
	none.slicesOf(gw.NamespacedName, a)
	if _, only := none.take(gw.NamespacedName); only {
		t.Error("without records, a reconcile did not read everything")
	}
	if none.queue(logr.Discard()) != nil {
		t.Error("without records, the controller's queue is not controller-runtime's own")
	}
}
