// Package statuswrite writes what Gatewall decides to the API server's
// status subresources: the one function every status write goes through
// (update, counted in gatewall_status_writes_total), an object's status
// set from its fresh copy and written only when it changes (WriteStatus:
// the statuses one reconciler decides alone, GatewayClasses', Gateways',
// ListenerSets', route filters' and NginxProxies'), route parent statuses that merge the entries of
// several owners (Gateways, ListenerSets) with other controllers'
// (WriteRouteParents), and the background writers of the Gateway
// reconciler's route statuses (RouteWriter) and policies' ancestor entries
// (PolicyWriter). What to write is
// decided elsewhere (package status, from a translation).
package statuswrite

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/metrics"
)

// update writes obj's status and counts the write
// (gatewall_status_writes_total). Every status Gatewall writes goes
// through it: WriteStatus for objects one reconciler decides, and the
// route and policy writers for objects several Gateways write into.
func update(ctx context.Context, c client.StatusClient, obj client.Object) error {
	err := c.Status().Update(ctx, obj)
	count(obj, err)
	return err
}

// count counts a status write's result.
func count(obj client.Object, err error) {
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

// WriteStatus sets the status of the object of key to what set makes of
// it: the object is read fresh (from c, of newObj's kind) for each try and
// written in one update, retried on conflicts; set changes the object it
// is given and says whether it changed anything. Nothing is written when
// it did not, nor for an object that is gone.
func WriteStatus(ctx context.Context, c client.Client, key types.NamespacedName, newObj func() client.Object, set func(client.Object) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := newObj()
		if err := c.Get(ctx, key, fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !set(fresh) {
			return nil
		}
		if err := update(ctx, c, fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // deleted since it was read: nothing to write
			}
			return fmt.Errorf("updating status of %T %s: %w", fresh, key, err)
		}
		return nil
	})
}
