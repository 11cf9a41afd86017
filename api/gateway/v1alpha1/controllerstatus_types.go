package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ControllerStatus is the status one controller gives an object that is
// not attached to Gateways as a policy is (a filter).
type ControllerStatus struct {
	// ControllerName is the controllerName of the GatewayClasses the
	// controller serves, e.g. gateway.nginx.org/nginx-gateway-controller.
	ControllerName gatewayv1.GatewayController `json:"controllerName"`

	// Conditions are the controller's conditions on the object.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
