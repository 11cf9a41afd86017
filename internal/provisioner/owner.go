package provisioner

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ControllerAnnotation on every data-plane object and pod names the
// controllerName of the Gatewall installation that made it. Several
// installations (for other GatewayClasses) may run in one cluster, even in
// one namespace: each creates, changes and deletes only its own data planes.
const ControllerAnnotation = "gatewall.io/controller-name"

// Owner is the Gatewall installation a data plane belongs to.
type Owner struct {
	// ControllerName is the controllerName the installation serves.
	ControllerName string
	// GatewayClassName is its GatewayClass: data-plane objects made before
	// they carried ControllerAnnotation are its when their class label
	// names it.
	GatewayClassName string
}

// Owns says whether obj is the data plane of gw made by this installation:
// its controller owner reference is the Gateway, with gw's UID (not a
// deleted Gateway of the same name), and its ControllerAnnotation names o's
// controller (or, on objects made before the annotation, its class label
// names o's class).
func (o Owner) Owns(gw *gatewayv1.Gateway, obj metav1.Object) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Gateway" || ref.UID != gw.UID {
		return false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != gatewayv1.GroupName {
		return false
	}
	if c, ok := obj.GetAnnotations()[ControllerAnnotation]; ok {
		return c == o.ControllerName
	}
	return obj.GetLabels()[GatewayClassLabel] == o.GatewayClassName
}

// describeController says who controls obj, for NotOwnedError.
func describeController(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return "no controller"
	}
	d := fmt.Sprintf("%s %s (UID %s)", ref.Kind, ref.Name, ref.UID)
	if c, ok := obj.GetAnnotations()[ControllerAnnotation]; ok {
		d += fmt.Sprintf(", made by the Gatewall installation of controller %q", c)
	}
	return d
}
