package graph

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/internal/validation"
)

// ClientValidation is how an HTTPS listener validates client certificates
// (the Gateway's tls.frontend for the listener's port).
type ClientValidation struct {
	// CAPEM are the CA certificates client certificates must chain to,
	// checked and re-encoded (pki.ParseCABundle).
	CAPEM []byte
	// ConfigMaps are where CAPEM comes from.
	ConfigMaps []types.NamespacedName
	// InsecureFallback accepts clients without a valid certificate
	// (AllowInsecureFallback); otherwise they are refused.
	InsecureFallback bool
}

// caCertKey is the ConfigMap key holding a CA bundle.
const caCertKey = "ca.crt"

// frontendValidation returns the client certificate validation of a port:
// its perPort entry, else the default. nil when the Gateway sets none.
func frontendValidation(gw *gatewayv1.Gateway, port gatewayv1.PortNumber) *gatewayv1.FrontendTLSValidation {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	for _, p := range f.PerPort {
		if p.Port == port {
			return p.TLS.Validation
		}
	}
	return f.Default.Validation
}

// insecureFrontendValidation is the Gateway's InsecureFrontendValidationMode
// condition: present while its default or a port's client certificate
// validation accepts clients that fail it (AllowInsecureFallback).
func insecureFrontendValidation(gw *gatewayv1.Gateway) *metav1.Condition {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	var where []string
	if v := f.Default.Validation; v != nil && v.Mode == gatewayv1.AllowInsecureFallback {
		where = append(where, "the default")
	}
	for _, p := range f.PerPort {
		if v := p.TLS.Validation; v != nil && v.Mode == gatewayv1.AllowInsecureFallback {
			where = append(where, fmt.Sprintf("port %d", p.Port))
		}
	}
	if len(where) == 0 {
		return nil
	}
	c := conditions.True(string(gatewayv1.GatewayConditionInsecureFrontendValidationMode), string(gatewayv1.GatewayReasonConfigurationChanged),
		fmt.Sprintf("client certificate validation of %s allows insecure fallback: clients without a valid certificate are accepted", strings.Join(where, ", ")))
	return &c
}

// resolveClientValidation resolves a listener's client certificate
// validation. Any reference that does not resolve keeps the listener off
// the data plane (it never serves without the validation it asks for);
// valid is the number of references that resolved.
func resolveClientValidation(in *Input, gw *gatewayv1.Gateway, v *gatewayv1.FrontendTLSValidation) (cv *ClientValidation, valid int, reason gatewayv1.ListenerConditionReason, err error) {
	cv = &ClientValidation{InsecureFallback: v.Mode == gatewayv1.AllowInsecureFallback}
	var errs []string
	for _, ref := range v.CACertificateRefs {
		pem, from, why, e := resolveCACertificate(in, gw, ref)
		if e != nil {
			if reason == "" {
				reason = why
			}
			errs = append(errs, e.Error())
			continue
		}
		valid++
		cv.CAPEM = append(cv.CAPEM, pem...)
		cv.ConfigMaps = append(cv.ConfigMaps, from)
	}
	if len(errs) > 0 {
		return nil, valid, reason, errors.New("tls.frontend validation: " + strings.Join(errs, "; "))
	}
	return cv, valid, "", nil
}

// resolveCACertificate resolves one caCertificateRef to its PEM bundle and
// the ConfigMap holding it.
func resolveCACertificate(in *Input, gw *gatewayv1.Gateway, ref gatewayv1.ObjectReference) ([]byte, types.NamespacedName, gatewayv1.ListenerConditionReason, error) {
	if string(ref.Group) != coreGroup || ref.Kind != "ConfigMap" {
		return nil, types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCACertificateKind, fmt.Errorf("caCertificateRef %s: only core ConfigMaps are supported",
			describeRef(string(ref.Group), string(ref.Kind), string(ref.Name)))
	}
	ns := gw.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if err := validation.ObjectReference(ns, string(ref.Name)); err != nil {
		return nil, types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCACertificateRef, fmt.Errorf("caCertificateRef: %w", err)
	}
	k := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	if !referenceAllowed(in, refGrantFrom{gatewayGroup, "Gateway", gw.Namespace}, refGrantTo{coreGroup, "ConfigMap", ns, string(ref.Name)}) {
		return nil, types.NamespacedName{}, gatewayv1.ListenerReasonRefNotPermitted,
			fmt.Errorf("caCertificateRef to ConfigMap %s is not permitted: no ReferenceGrant in %s allows Gateways from %s%s", k, ns, gw.Namespace, in.UnreadableGrants(ns))
	}
	cm := in.ConfigMaps[k]
	if cm == nil {
		return nil, types.NamespacedName{}, gatewayv1.ListenerReasonInvalidCACertificateRef, errors.New(in.missing("ConfigMap", k))
	}
	data, err := pki.ParseCABundle([]byte(cm.Data[caCertKey]))
	if err != nil {
		return nil, k, gatewayv1.ListenerReasonInvalidCACertificateRef, fmt.Errorf("ConfigMap %s key %s: %w", k, caCertKey, err)
	}
	return data, k, "", nil
}
