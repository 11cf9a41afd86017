package apis

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/plm"
)

// detectPLMGroup returns the forced PLM group, else the first installed of
// appprotect.f5.com (what PLM ships) and waf.f5.com; "" when neither is.
func detectPLMGroup(mgr ctrl.Manager, forced string) string {
	if forced != "" {
		return forced
	}
	for _, g := range []string{plm.GroupAppProtect, plm.GroupWAF} {
		if crdInstalled(mgr, g, "APPolicy") {
			return g
		}
	}
	return ""
}

// crdInstalled says whether the API server serves the kind: discovery
// maps it, and a list of it (uncached, of one object's metadata) answers,
// as the informers started for it list first: a list refused then would
// have client-go's reflector back off (up to 30 s), missing meanwhile
// what is created. Otherwise the next look (DefaultAPIDiscoveryInterval)
// tries again.
func crdInstalled(mgr ctrl.Manager, group, kind string, versions ...string) bool {
	m, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: kind}, versions...)
	if err != nil {
		return false
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(kind + "List"))
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	return mgr.GetAPIReader().List(ctx, list, client.Limit(1)) == nil
}

// listTimeout bounds crdInstalled's list.
const listTimeout = 10 * time.Second
