package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gatewall/gatewall/internal/apis"
)

// optionalWatcher adds watches of optional APIs' kinds to a built
// controller once their CRDs are installed: at once when they are, else
// when apis.Registry.Serve says so (a running controller starts a watch added late).
type optionalWatcher struct {
	mgr  ctrl.Manager
	c    controller.Controller
	apis *apis.Registry
}

func (w optionalWatcher) watch(api apis.API, obj client.Object, h handler.EventHandler, preds ...predicate.Predicate) error {
	return w.apis.When(api, func() error {
		return w.c.Watch(source.Kind(w.mgr.GetCache(), obj, h, preds...))
	})
}

// watchPLM watches APPolicies and APLogConfs, of the group PLM serves,
// for changes of what they report (PLMStatusChanged).
func (w optionalWatcher) watchPLM(cfg Config, h handler.EventHandler) error {
	return w.apis.When(apis.PLM, func() error {
		for _, obj := range plmObjects(cfg.plmGroup()) {
			if err := w.c.Watch(source.Kind(w.mgr.GetCache(), obj, h, PLMStatusChanged())); err != nil {
				return err
			}
		}
		return nil
	})
}
