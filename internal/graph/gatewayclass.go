package graph

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// GatewayClass is a GatewayClass whose controllerName is Gatewall's.
type GatewayClass struct {
	Source *gatewayv1.GatewayClass
	// Valid says whether the class is accepted: its parametersRef, if any,
	// resolves to a valid NginxProxy.
	Valid bool
	// NginxProxy is the class's resolved NginxProxy, or nil.
	NginxProxy *v1alpha2.NginxProxy
	// Conditions are the class's conditions (Accepted).
	Conditions []metav1.Condition
}

// BuildGatewayClass returns the class with that name if it exists and is
// Gatewall's, else nil.
func BuildGatewayClass(in *Input, name string) *GatewayClass {
	gc := in.GatewayClasses[name]
	if gc == nil || string(gc.Spec.ControllerName) != in.ControllerName {
		return nil
	}
	c := &GatewayClass{Source: gc, Valid: true}
	if msg, ok := in.Unreadable("GatewayClass", key("", name)); ok {
		// The Gateway API has no reason for a class that cannot be read;
		// Invalid is the one it gives Gateways and ListenerSets for it.
		c.Valid = false
		c.Conditions = append(c.Conditions, conditions.False(string(gatewayv1.GatewayClassConditionStatusAccepted),
			string(gatewayv1.GatewayReasonInvalid), msg))
		return c
	}
	np, err := resolveNginxProxyRef(in, gc.Spec.ParametersRef)
	if err != nil {
		c.Valid = false
		c.Conditions = append(c.Conditions, conditions.False(string(gatewayv1.GatewayClassConditionStatusAccepted),
			string(gatewayv1.GatewayClassReasonInvalidParameters), err.Error()))
		return c
	}
	c.NginxProxy = np
	c.Conditions = append(c.Conditions, conditions.True(string(gatewayv1.GatewayClassConditionStatusAccepted),
		string(gatewayv1.GatewayClassReasonAccepted), "GatewayClass is accepted"))
	return c
}

// resolveNginxProxyRef resolves a GatewayClass parametersRef; nil ref is fine.
func resolveNginxProxyRef(in *Input, ref *gatewayv1.ParametersReference) (*v1alpha2.NginxProxy, error) {
	if ref == nil {
		return nil, nil
	}
	if string(ref.Group) != v1alpha2.GroupVersion.Group || ref.Kind != "NginxProxy" {
		return nil, fmt.Errorf("parametersRef must refer to a %s NginxProxy, not %s %s", v1alpha2.GroupVersion.Group, ref.Group, ref.Kind)
	}
	if ref.Namespace == nil {
		return nil, fmt.Errorf("parametersRef to NginxProxy %s must set a namespace: NginxProxy is namespaced", ref.Name)
	}
	return lookupNginxProxy(in, string(*ref.Namespace), ref.Name)
}

func lookupNginxProxy(in *Input, namespace, name string) (*v1alpha2.NginxProxy, error) {
	np := in.NginxProxies[key(namespace, name)]
	if np == nil {
		return nil, errors.New(in.missing("NginxProxy", key(namespace, name)))
	}
	if errs := validation.NginxProxy(np); len(errs) > 0 {
		return nil, fmt.Errorf("NginxProxy %s/%s is invalid: %s", namespace, name, errs.ToAggregate())
	}
	return np, nil
}
