package controller

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/snapshot"
)

// setupIndexes registers the field indexes of package snapshot: those of
// the kinds every cluster serves at once, the others when their CRD is
// installed (at start or later), before anything that lists by them.
func setupIndexes(ctx context.Context, mgr ctrl.Manager, cfg Config) error {
	idx := mgr.GetFieldIndexer()
	index := func(indexes []snapshot.FieldIndex) error {
		for _, e := range indexes {
			if err := idx.IndexField(ctx, e.Obj, e.Field, e.Fn); err != nil {
				return fmt.Errorf("indexing %T by %s: %w", e.Obj, e.Field, err)
			}
		}
		return nil
	}
	if err := index(snapshot.Indexes(cfg.ControllerName)); err != nil {
		return err
	}
	// Before anything that lists by them (When runs uses in order).
	if err := cfg.APIs.When(apis.ListenerSet, func() error { return index(snapshot.ListenerSetIndexes()) }); err != nil {
		return err
	}
	for _, k := range routekind.Optional() {
		if err := cfg.APIs.When(apis.RouteAPI(k), func() error { return index(snapshot.RouteIndexes(k, cfg.ControllerName)) }); err != nil {
			return err
		}
	}
	return nil
}
