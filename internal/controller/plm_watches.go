package controller

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
)

// plmObjects are the PLM kinds of a group, to watch: APPolicy, APLogConf.
func plmObjects(group string) []client.Object {
	switch group {
	case appprotectv1.GroupVersion.Group:
		return []client.Object{&appprotectv1.APPolicy{}, &appprotectv1.APLogConf{}}
	case wafv1alpha1.GroupVersion.Group:
		return []client.Object{&wafv1alpha1.APPolicy{}, &wafv1alpha1.APLogConf{}}
	}
	return nil
}

// plmStatus returns a PLM object's status.
func plmStatus(o client.Object) *plm.Status {
	switch o := o.(type) {
	case *appprotectv1.APPolicy:
		return &o.Status
	case *appprotectv1.APLogConf:
		return &o.Status
	case *wafv1alpha1.APPolicy:
		return &o.Status
	case *wafv1alpha1.APLogConf:
		return &o.Status
	}
	return nil
}

// PLMStatusChanged passes creations, deletions, and updates that change a PLM
// object's status.bundle (state, location, sha256) or status.processing
// (datetime, errors); nothing else of a PLM object matters to Gatewall.
func PLMStatusChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			a, b := plmStatus(e.ObjectOld), plmStatus(e.ObjectNew)
			if a == nil || b == nil {
				return true
			}
			ka, kb := bundleKeyOf(a), bundleKeyOf(b)
			return ka.bundle != kb.bundle || ka.datetime != kb.datetime || !slices.Equal(ka.errors, kb.errors)
		},
	}
}

// bundleKey is the part of a PLM status Gatewall reacts to.
type bundleKey struct {
	bundle   [3]string // state, location, sha256
	datetime string
	errors   []string
}

func bundleKeyOf(s *plm.Status) bundleKey {
	var k bundleKey
	if b := s.Bundle; b != nil {
		k.bundle = [3]string{b.State, b.Location, b.Sha256}
	}
	if p := s.Processing; p != nil {
		k.datetime, k.errors = p.Datetime, p.Errors
	}
	return k
}
