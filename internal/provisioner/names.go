package provisioner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
)

// Labels on every provisioned object and pod.
const (
	// GatewayNameLabel is the label GEP-1762 puts on a Gateway's infrastructure.
	GatewayNameLabel = "gateway.networking.k8s.io/gateway-name"
	// GatewayClassLabel names the Gateway's class.
	GatewayClassLabel = "gateway.networking.k8s.io/gateway-class-name"
	// ManagedByLabel marks objects Gatewall owns.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "gatewall"
	// ComponentLabel says what the object is part of.
	ComponentLabel = "app.kubernetes.io/component"
	component      = "data-plane"
)

// Name is the name of a Gateway's data-plane objects: <gateway>-<class>
// (GEP-1762), shortened with a hash when over 63 characters.
func Name(gw *gatewayv1.Gateway) string {
	n := fmt.Sprintf("%s-%s", gw.Name, gw.Spec.GatewayClassName)
	if len(n) <= 63 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return n[:54] + "-" + hex.EncodeToString(sum[:])[:8]
}

// Labels are the labels of a Gateway's data-plane objects and pods: those
// of the Gateway's spec.infrastructure its class allows
// (graph.InfrastructureMetadata; np is its effective NginxProxy), and
// Gatewall's own, which win.
func Labels(gw *gatewayv1.Gateway, np *v1alpha2.NginxProxySpec) map[string]string {
	out := map[string]string{}
	labels, _, _ := graph.InfrastructureMetadata(gw, np)
	for k, v := range labels {
		out[k] = v
	}
	out[GatewayNameLabel] = gw.Name
	out[GatewayClassLabel] = string(gw.Spec.GatewayClassName)
	out[ManagedByLabel] = managedBy
	out[ComponentLabel] = component
	return out
}

// Annotations are the annotations of the Gateway's spec.infrastructure its
// class allows, put on its data-plane objects and pods (nil when none).
func Annotations(gw *gatewayv1.Gateway, np *v1alpha2.NginxProxySpec) map[string]string {
	_, annotations, _ := graph.InfrastructureMetadata(gw, np)
	return annotations
}

// selector is the subset of Labels that selects the pods; it never changes
// (a Deployment's selector cannot).
func selector(gw *gatewayv1.Gateway) map[string]string {
	return map[string]string{GatewayNameLabel: gw.Name, ManagedByLabel: managedBy}
}

// PodSelector selects the pods of the Gateway's data plane for its current
// class (as its Service does).
func PodSelector(gw *gatewayv1.Gateway) map[string]string { return serviceSelector(gw) }

// serviceSelector selects the pods of the Gateway's data plane for its
// current class: while a Gateway changes class, the data plane of its
// former class (another installation's, perhaps) still runs pods with the
// same Gateway name, and must not receive the new Service's traffic.
func serviceSelector(gw *gatewayv1.Gateway) map[string]string {
	s := selector(gw)
	s[GatewayClassLabel] = string(gw.Spec.GatewayClassName)
	return s
}
