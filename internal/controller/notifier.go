package controller

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// Notifier fans events from outside the cluster (a bundle fetched, a data
// plane applied a configuration) out to every reconciler that subscribed.
// Notify never blocks: a subscriber with a pending event does not need a
// second one, because reconcilers read the current state.
type Notifier struct {
	mu   sync.Mutex
	subs []chan event.GenericEvent
}

// Notify wakes every subscriber.
func (n *Notifier) Notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ch := range n.subs {
		select {
		case ch <- event.GenericEvent{Object: &wakeup{}}:
		default: // one pending wake-up is enough
		}
	}
}

// Source returns a source for one controller that maps each wake-up with fn.
func (n *Notifier) Source(fn handler.MapFunc) source.Source {
	ch := make(chan event.GenericEvent, 1)
	n.mu.Lock()
	n.subs = append(n.subs, ch)
	n.mu.Unlock()
	return source.Channel(ch, handler.EnqueueRequestsFromMapFunc(fn))
}

// wakeup is the object carried by wake-up events; mappers ignore it.
type wakeup struct{ client.Object }
