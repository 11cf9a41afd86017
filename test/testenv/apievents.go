package testenv

import (
	"context"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventsAbout lists the events.k8s.io Events regarding the object key (in
// its namespace) with the reason.
func EventsAbout(c client.Reader, key types.NamespacedName, reason string) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace(key.Namespace)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == key.Name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}
