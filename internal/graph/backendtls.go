package graph

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/internal/validation"
)

// KindBackendTLSPolicy is the Gateway API kind of BackendTLSPolicies.
const KindBackendTLSPolicy = "BackendTLSPolicy"

// BackendTLS is how NGINX speaks TLS to a backend: the BackendTLSPolicy
// that applies to its Service port.
type BackendTLS struct {
	Policy types.NamespacedName
	// Hostname is sent as SNI and must be in the backend's certificate.
	Hostname string
	// CAPEM are the CA certificates the backend's certificate must chain
	// to, checked and re-encoded (pki.ParseCABundle); SystemCAs uses the
	// data plane's system trust store instead.
	CAPEM     []byte
	SystemCAs bool
	// Sources are where CAPEM comes from ("ConfigMap ns/name", "Secret
	// ns/name"), in the policy's order.
	Sources []string
}

// Same says whether two backends are spoken to with the same TLS settings.
func (t *BackendTLS) Same(o *BackendTLS) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.Hostname == o.Hostname && string(t.CAPEM) == string(o.CAPEM) && t.SystemCAs == o.SystemCAs
}

// BackendTLSOutcome is what Gatewall makes of one BackendTLSPolicy: its
// Accepted and ResolvedRefs conditions, and the TLS settings when usable.
type BackendTLSOutcome struct {
	Conditions []metav1.Condition
	TLS        *BackendTLS
}

// SystemCAsFile is the data plane's system trust store (Debian's).
const SystemCAsFile = "/etc/ssl/certs/ca-certificates.crt"

// BackendTLSPolicyOutcome evaluates one BackendTLSPolicy. Conflicts are
// decided among the policies of its namespace: for a Service port, a policy
// naming the port (sectionName) beats one naming the whole Service, and among
// equals the oldest (then by name) wins.
func BackendTLSPolicyOutcome(in *Input, p *gatewayv1.BackendTLSPolicy) BackendTLSOutcome {
	accepted, resolved := string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.BackendTLSPolicyConditionResolvedRefs)
	key := key(p.Namespace, p.Name)
	if msg, ok := in.Unreadable(KindBackendTLSPolicy, key); ok {
		// Its stub still claims its targets: their ports get no TLS
		// settings and are not used, rather than spoken to in cleartext.
		return BackendTLSOutcome{Conditions: []metav1.Condition{conditions.False(accepted, string(gatewayv1.PolicyReasonInvalid), msg)}}
	}
	for _, t := range p.Spec.TargetRefs {
		if winner := backendTLSWinner(in, p.Namespace, string(t.Name), sectionOf(t)); winner != nil && winner.Name != p.Name {
			return BackendTLSOutcome{Conditions: []metav1.Condition{
				conditions.False(accepted, string(gatewayv1.PolicyReasonConflicted),
					fmt.Sprintf("BackendTLSPolicy %s/%s already applies to Service %s%s", winner.Namespace, winner.Name, t.Name, sectionSuffix(t))),
			}}
		}
	}
	tls, reason, err := resolveBackendTLS(in, p)
	if err != nil {
		var conds []metav1.Condition
		switch reason {
		case gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, gatewayv1.BackendTLSPolicyReasonInvalidKind:
			conds = []metav1.Condition{
				conditions.False(accepted, string(gatewayv1.BackendTLSPolicyReasonNoValidCACertificate), err.Error()),
				conditions.False(resolved, string(reason), err.Error()),
			}
		default:
			conds = []metav1.Condition{conditions.False(accepted, string(reason), err.Error())}
		}
		return BackendTLSOutcome{Conditions: conds}
	}
	tls.Policy = key
	refs := "every CA certificate reference resolves"
	if tls.SystemCAs {
		refs = "backend certificates are verified against the data plane's system trust store"
	}
	return BackendTLSOutcome{TLS: tls, Conditions: []metav1.Condition{
		conditions.True(accepted, string(gatewayv1.PolicyReasonAccepted), "BackendTLSPolicy is accepted"),
		conditions.True(resolved, string(gatewayv1.BackendTLSPolicyReasonResolvedRefs), refs),
	}}
}

// TargetsService says whether a policy target is a Service: kind Service of
// the core group, which policy targets may also spell "core" (as Gatewall's
// own policies accept).
func TargetsService(t gatewayv1.LocalPolicyTargetReference) bool {
	return (t.Group == coreGroup || t.Group == "core") && t.Kind == "Service"
}

func sectionOf(t gatewayv1.LocalPolicyTargetReferenceWithSectionName) string {
	if t.SectionName == nil {
		return ""
	}
	return string(*t.SectionName)
}

func sectionSuffix(t gatewayv1.LocalPolicyTargetReferenceWithSectionName) string {
	if s := sectionOf(t); s != "" {
		return " port " + s
	}
	return ""
}

// backendTLSWinner is the policy that applies to a Service port: policies
// naming the port, else those naming the whole Service; the oldest wins.
// section "" asks for the whole-Service policies only.
func backendTLSWinner(in *Input, ns, service, section string) *gatewayv1.BackendTLSPolicy {
	var exact, whole []*gatewayv1.BackendTLSPolicy
	for _, p := range in.BackendTLSPolicies {
		if p.Namespace != ns {
			continue
		}
		for _, t := range p.Spec.TargetRefs {
			if !TargetsService(t.LocalPolicyTargetReference) || string(t.Name) != service {
				continue
			}
			switch s := sectionOf(t); {
			case s == "":
				whole = append(whole, p)
			case s == section:
				exact = append(exact, p)
			}
		}
	}
	if section != "" && len(exact) > 0 {
		return oldest(exact)
	}
	if section == "" && len(whole) > 0 {
		return oldest(whole)
	}
	return nil
}

func oldest(ps []*gatewayv1.BackendTLSPolicy) *gatewayv1.BackendTLSPolicy {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i].CreationTimestamp, ps[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return ps[i].Name < ps[j].Name
	})
	return ps[0]
}

// CheckBackendTLSPolicy re-checks what of a policy does not depend on other
// objects: nil when resolving its CA certificates decides whether it is
// accepted.
func CheckBackendTLSPolicy(p *gatewayv1.BackendTLSPolicy) error {
	if _, _, err := checkBackendTLS(p); err != nil {
		return err
	}
	for _, ref := range p.Spec.Validation.CACertificateRefs {
		if _, err := checkCARef(p.Namespace, ref); err != nil {
			return err
		}
	}
	return nil
}

// checkBackendTLS checks a policy's validation settings; the CA
// certificate references are left to the caller.
func checkBackendTLS(p *gatewayv1.BackendTLSPolicy) (*BackendTLS, gatewayv1.PolicyConditionReason, error) {
	v := p.Spec.Validation
	if err := overLimit([]listLimit{{"targetRefs", len(p.Spec.TargetRefs), validation.MaxPolicyTargets},
		{"validation.caCertificateRefs", len(v.CACertificateRefs), validation.MaxBackendTLSCARefs}}); err != nil {
		return nil, gatewayv1.PolicyReasonInvalid, err
	}
	if err := validation.Hostname(string(v.Hostname)); err != nil {
		return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("validation.hostname: %w", err)
	}
	if strings.HasPrefix(string(v.Hostname), "*") {
		return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("validation.hostname %q must not be a wildcard", v.Hostname)
	}
	if len(v.SubjectAltNames) > 0 {
		return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("validation.subjectAltNames is not supported: NGINX verifies the backend's certificate against validation.hostname only")
	}
	if len(p.Spec.Options) > 0 {
		return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("options are not supported")
	}
	tls := &BackendTLS{Hostname: string(v.Hostname)}
	if v.WellKnownCACertificates != nil {
		if *v.WellKnownCACertificates != gatewayv1.WellKnownCACertificatesSystem {
			return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("wellKnownCACertificates %q is not supported; use System", *v.WellKnownCACertificates)
		}
		if len(v.CACertificateRefs) > 0 {
			return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("caCertificateRefs and wellKnownCACertificates cannot both be set")
		}
		tls.SystemCAs = true
		return tls, "", nil
	}
	if len(v.CACertificateRefs) == 0 {
		return nil, gatewayv1.PolicyReasonInvalid, fmt.Errorf("one of caCertificateRefs or wellKnownCACertificates is required")
	}
	return tls, "", nil
}

// checkCARef checks a CA certificate reference: a ConfigMap, as the
// Gateway API's core support, or a Secret, as NGINX Gateway Fabric reads
// them (its secure-backend guide keeps the CA in one), both by their
// ca.crt key.
func checkCARef(ns string, ref gatewayv1.LocalObjectReference) (gatewayv1.PolicyConditionReason, error) {
	if string(ref.Group) != coreGroup || ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
		return gatewayv1.BackendTLSPolicyReasonInvalidKind, fmt.Errorf("caCertificateRef %s: only core ConfigMaps and Secrets are supported",
			describeRef(string(ref.Group), string(ref.Kind), string(ref.Name)))
	}
	// The API server refuses such names; a bypass or an offline
	// manifest may not, and the name reaches messages and lookups.
	if err := validation.ObjectReference(ns, string(ref.Name)); err != nil {
		return gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Errorf("caCertificateRef: %w", err)
	}
	return "", nil
}

// resolveBackendTLS validates a policy and resolves its CA certificates.
func resolveBackendTLS(in *Input, p *gatewayv1.BackendTLSPolicy) (*BackendTLS, gatewayv1.PolicyConditionReason, error) {
	tls, reason, err := checkBackendTLS(p)
	if err != nil || tls.SystemCAs {
		return tls, reason, err
	}
	for _, ref := range p.Spec.Validation.CACertificateRefs {
		if reason, err := checkCARef(p.Namespace, ref); err != nil {
			return nil, reason, err
		}
		k := key(p.Namespace, string(ref.Name))
		pem, found := caData(in, string(ref.Kind), k)
		if !found {
			return nil, gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Errorf("caCertificateRef: %s", in.missing(string(ref.Kind), k))
		}
		data, err := pki.ParseCABundle(pem)
		if err != nil {
			return nil, gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Errorf("caCertificateRef: %s %s key %s: %w", ref.Kind, k, caCertKey, err)
		}
		tls.CAPEM = append(tls.CAPEM, data...)
		tls.Sources = append(tls.Sources, string(ref.Kind)+" "+k.String())
	}
	return tls, "", nil
}

// caData is the ca.crt of a ConfigMap or Secret, and whether it exists.
func caData(in *Input, kind string, k types.NamespacedName) ([]byte, bool) {
	if kind == "Secret" {
		if s := in.Secrets[k]; s != nil {
			return s.Data[caCertKey], true
		}
		return nil, false
	}
	if cm := in.ConfigMaps[k]; cm != nil {
		return []byte(cm.Data[caCertKey]), true
	}
	return nil, false
}

// backendTLS returns the TLS settings of a Service port (nil: cleartext), or
// why the port cannot be used: its policy is not usable.
func backendTLS(in *Input, svc types.NamespacedName, port *corev1.ServicePort) (*BackendTLS, error) {
	p := backendTLSWinner(in, svc.Namespace, svc.Name, port.Name)
	if p == nil && port.Name != "" {
		p = backendTLSWinner(in, svc.Namespace, svc.Name, "")
	}
	if p == nil {
		return nil, nil
	}
	out := BackendTLSPolicyOutcome(in, p)
	if out.TLS == nil {
		msg := "not usable"
		if len(out.Conditions) > 0 {
			msg = out.Conditions[len(out.Conditions)-1].Message
		}
		return nil, fmt.Errorf("BackendTLSPolicy %s/%s: %s", p.Namespace, p.Name, msg)
	}
	return out.TLS, nil
}

// ruleTLS returns the TLS settings every valid backend of a rule shares.
// NGINX speaks to one rule's backends with one set of proxy_ssl_*
// directives, so backends that need different ones cannot share a rule.
func ruleTLS(bs []*Backend) (*BackendTLS, error) {
	var first *Backend
	for _, b := range bs {
		if !b.Valid {
			continue
		}
		if first == nil {
			first = b
			continue
		}
		if !first.TLS.Same(b.TLS) {
			return nil, fmt.Errorf("backendRefs %s and %s need different TLS settings (BackendTLSPolicies); NGINX cannot split one rule's traffic between them", first.Name, b.Name)
		}
	}
	if first == nil {
		return nil, nil
	}
	return first.TLS, nil
}
