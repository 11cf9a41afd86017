package graph

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/internal/validation"
)

// Certificate is a TLS certificate chain and key from a Secret.
type Certificate struct {
	Secret types.NamespacedName
	// PEM is the chain and the key, checked and re-encoded (pki.KeyPair):
	// the one file NGINX loads.
	PEM []byte
}

// resolveCertificate resolves the first certificateRef of a listener that
// terminates TLS (HTTPS, or TLS in mode Terminate).
func resolveCertificate(in *Input, owner listenerOwner, protocol gatewayv1.ProtocolType, cfg *gatewayv1.ListenerTLSConfig) (*Certificate, gatewayv1.ListenerConditionReason, error) {
	invalid := gatewayv1.ListenerReasonInvalidCertificateRef
	if cfg == nil || len(cfg.CertificateRefs) == 0 {
		if protocol == gatewayv1.TLSProtocolType {
			return nil, invalid, errors.New("a TLS listener in mode Terminate needs tls.certificateRefs")
		}
		return nil, invalid, errors.New("an HTTPS listener needs tls.certificateRefs")
	}
	if cfg.Mode != nil && *cfg.Mode != gatewayv1.TLSModeTerminate {
		return nil, invalid, fmt.Errorf("tls.mode %s is not supported on HTTPS listeners; use Terminate", *cfg.Mode)
	}
	c, notPermitted, err := resolveSecretCertificate(in, owner, cfg.CertificateRefs[0], "certificateRef")
	switch {
	case notPermitted:
		return nil, gatewayv1.ListenerReasonRefNotPermitted, err
	case err != nil:
		return nil, invalid, err
	}
	return c, "", nil
}

// resolveSecretCertificate resolves a reference of a Gateway or ListenerSet
// (what names it, for messages) to a Secret holding a TLS certificate and
// key; notPermitted says a ReferenceGrant is missing.
func resolveSecretCertificate(in *Input, owner listenerOwner, ref gatewayv1.SecretObjectReference, what string) (c *Certificate, notPermitted bool, err error) {
	group, kind := coreGroup, "Secret"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if group != coreGroup || kind != "Secret" {
		return nil, false, fmt.Errorf("%s %s: only core Secrets are supported", what, describeRef(group, kind, string(ref.Name)))
	}
	ns := owner.namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if err := validation.ObjectReference(ns, string(ref.Name)); err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	secretKey := key(ns, string(ref.Name))
	if !referenceAllowed(in, refGrantFrom{gatewayGroup, owner.kind, owner.namespace}, refGrantTo{coreGroup, "Secret", ns, string(ref.Name)}) {
		return nil, true, fmt.Errorf("%s to Secret %s is not permitted: no ReferenceGrant in %s allows %ss from %s%s",
			what, secretKey, ns, owner.kind, owner.namespace, in.UnreadableGrants(ns))
	}
	s := in.Secrets[secretKey]
	if s == nil {
		return nil, false, errors.New(in.missing("Secret", secretKey))
	}
	// What NGINX's OpenSSL would refuse would make NGINX reject the whole
	// configuration: it is refused here, on the reference alone.
	pair, err := pki.ParseKeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, false, fmt.Errorf("Secret %s does not hold a TLS certificate and key NGINX can load: %w", secretKey, err)
	}
	return &Certificate{Secret: secretKey, PEM: pair.PEM}, false, nil
}

// backendClientCertificate resolves the certificate a Gateway presents to
// backends it speaks TLS to (spec.tls.backend.clientCertificateRef) and
// returns the Gateway's ResolvedRefs condition; nil condition when the
// Gateway names none. An unresolved reference leaves the certificate out:
// backends that require one refuse the connections.
func backendClientCertificate(in *Input, gw *gatewayv1.Gateway) (*Certificate, *metav1.Condition) {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil, nil
	}
	t := string(gatewayv1.GatewayConditionResolvedRefs)
	c, notPermitted, err := resolveSecretCertificate(in, gatewayOwner(gw), *gw.Spec.TLS.Backend.ClientCertificateRef, "tls.backend.clientCertificateRef")
	switch {
	case notPermitted:
		cond := conditions.False(t, string(gatewayv1.GatewayReasonRefNotPermitted), err.Error())
		return nil, &cond
	case err != nil:
		cond := conditions.False(t, string(gatewayv1.GatewayReasonInvalidClientCertificateRef), err.Error())
		return nil, &cond
	}
	cond := conditions.True(t, string(gatewayv1.GatewayReasonResolvedRefs), "the backend client certificate resolves")
	return c, &cond
}
