package controller

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gatewall/gatewall/internal/coalesce"
)

// Notifier fans events from outside the cluster (a bundle fetched, a data
// plane applied a configuration) out to every reconciler that subscribed.
// Notify and NotifyGateway never block: what was notified is recorded per
// subscriber and collected when the subscriber's controller handles its
// wake-up, so a wake-up pending already carries later notifications too.
type Notifier struct {
	mu   sync.Mutex
	subs []*subscriber
}

// subscriber is one controller's pending notifications.
type subscriber struct {
	ch chan event.GenericEvent // capacity 1: "collect what is pending"

	all      atomic.Bool
	gateways coalesce.Keys[types.NamespacedName]
}

// Notify wakes every subscriber for everything it maps to.
func (n *Notifier) Notify() {
	n.each(func(s *subscriber) { s.all.Store(true) })
}

// NotifyGateway wakes the subscribers for one Gateway: the data plane of
// gw changed.
func (n *Notifier) NotifyGateway(gw types.NamespacedName) {
	n.each(func(s *subscriber) { s.gateways.Add(gw) })
}

func (n *Notifier) each(record func(*subscriber)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range n.subs {
		record(s)
		select {
		case s.ch <- event.GenericEvent{Object: &wakeup{}}:
		default: // a wake-up is pending: it collects this notification too
		}
	}
}

// take returns and clears what is pending.
func (s *subscriber) take() (all bool, gateways []types.NamespacedName) {
	return s.all.Swap(false), s.gateways.Take()
}

// GatewaySource returns a source for one controller that maps a Notify with
// all and each Gateway notified with ofGateway; a nil ofGateway maps those
// with all too.
func (n *Notifier) GatewaySource(all handler.MapFunc, ofGateway func(context.Context, types.NamespacedName) []reconcile.Request) source.Source {
	s := &subscriber{ch: make(chan event.GenericEvent, 1)}
	n.mu.Lock()
	n.subs = append(n.subs, s)
	n.mu.Unlock()
	return source.Channel(s.ch, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		everything, gateways := s.take()
		switch {
		case everything, ofGateway == nil && len(gateways) > 0:
			return all(ctx, o)
		}
		var reqs []reconcile.Request
		for _, gw := range gateways {
			reqs = append(reqs, ofGateway(ctx, gw)...)
		}
		return reqs
	}))
}

// wakeup is the object carried by wake-up events; mappers ignore it.
type wakeup struct{ client.Object }
