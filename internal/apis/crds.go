package apis

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

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

// crdInstalled says whether the API server serves the kind.
func crdInstalled(mgr ctrl.Manager, group, kind string, versions ...string) bool {
	_, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: kind}, versions...)
	return err == nil
}
