package graph

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestListenerRulesRechecked: rules the API server enforces on listeners
// (CEL and enums) and settings Gatewall cannot honour are refused on the
// listener, never ignored; the Gateway's other listener keeps working.
func TestListenerRulesRechecked(t *testing.T) {
	https := func(tls *gatewayv1.ListenerTLSConfig) gatewayv1.Listener {
		return gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, TLS: tls}
	}
	cert := []gatewayv1.SecretObjectReference{{Name: "cert"}}
	cases := []struct {
		name     string
		listener gatewayv1.Listener
		frontend *gatewayv1.FrontendTLSConfig
		want     string
	}{
		{"tls on an HTTP listener", gatewayv1.Listener{Name: "plain", Port: 8080, Protocol: gatewayv1.HTTPProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: cert}}, nil, "tls must not be specified for protocol HTTP"},
		{"a tls option NGINX's OpenSSL would not take", https(&gatewayv1.ListenerTLSConfig{CertificateRefs: cert,
			Options: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"nginx.org/ssl-protocols": "SSLv3"}}), nil,
			`tls.options[nginx.org/ssl-protocols] "SSLv3": SSLv3 is not in the data plane's OpenSSL 3.0`},
		{"tls options on a passthrough listener", gatewayv1.Listener{Name: "pass", Port: 8443, Protocol: gatewayv1.TLSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough),
				Options: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"nginx.org/ssl-ciphers": "HIGH"}}}, nil,
			"do not apply to a listener in tls.mode Passthrough"},
		{"unknown client certificate validation mode", https(&gatewayv1.ListenerTLSConfig{CertificateRefs: cert}),
			&gatewayv1.FrontendTLSConfig{Default: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{Mode: "AllowAnything"}}},
			`has mode "AllowAnything"; use AllowValidOnly or AllowInsecureFallback`},
		{"unknown protocol, quoted", gatewayv1.Listener{Name: "odd", Port: 9000, Protocol: "HTTP\n3"}, nil, `protocol "HTTP\n3" is not supported`},
		{"TLS terminated where client certificates are validated", gatewayv1.Listener{Name: "term", Port: 8443, Protocol: gatewayv1.TLSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: cert}},
			&gatewayv1.FrontendTLSConfig{Default: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}}},
			"which Gatewall applies to HTTPS listeners only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			gw := in.Gateways[key("ns", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, tc.listener)
			if tc.frontend != nil {
				gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: tc.frontend}
			}
			g := buildTest(t, in)
			if !g.Valid || !g.Listeners[0].Valid {
				t.Fatalf("the Gateway's other listener must keep working: %+v", g.Conditions)
			}
			l := g.Listeners[1]
			c := l.Conditions[0]
			if l.Valid || l.Attachable || c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.ListenerReasonUnsupportedValue) &&
				c.Reason != string(gatewayv1.ListenerReasonUnsupportedProtocol) || !strings.Contains(c.Message, tc.want) {
				t.Errorf("listener %s: valid=%v %s %s %q, want %q", l.Name, l.Valid, c.Status, c.Reason, c.Message, tc.want)
			}
		})
	}
}

// TestGatewayRulesRechecked: rules the API server enforces on a whole
// Gateway that Gatewall relies on refuse the Gateway.
func TestGatewayRulesRechecked(t *testing.T) {
	cases := []struct {
		name   string
		change func(*gatewayv1.Gateway)
		want   string
	}{
		{"listener names repeated", func(gw *gatewayv1.Gateway) {
			gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "http", Port: 8080, Protocol: gatewayv1.HTTPProtocolType})
		}, `the name "http" is used more than once`},
		{"client certificate validation ports repeated", func(gw *gatewayv1.Gateway) {
			v := gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{Mode: gatewayv1.AllowValidOnly}}
			gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{PerPort: []gatewayv1.TLSPortConfig{{Port: 443, TLS: v}, {Port: 443, TLS: v}}}}
		}, "port 443 is listed more than once"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			tc.change(in.Gateways[key("ns", "gw")])
			g := buildTest(t, in)
			c := g.Conditions[0]
			if g.Valid || c.Reason != string(gatewayv1.GatewayReasonInvalid) || !strings.Contains(c.Message, tc.want) {
				t.Errorf("valid=%v %s %q, want %q", g.Valid, c.Reason, c.Message, tc.want)
			}
		})
	}
}

// TestPassthroughUnderClientValidation: a passthrough listener on a port
// with client certificate validation is accepted (NGINX cannot validate what
// it does not terminate) and says so.
func TestPassthroughUnderClientValidation(t *testing.T) {
	in := testInput()
	gw := in.Gateways[key("ns", "gw")]
	mode := gatewayv1.TLSModePassthrough
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 8443, Protocol: gatewayv1.TLSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: &mode}})
	gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{Default: gatewayv1.TLSConfig{
		Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}}}}
	g := buildTest(t, in)
	l := g.Listeners[1]
	c := l.Conditions[0]
	if !l.Valid || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "does not apply to this listener") {
		t.Errorf("passthrough listener: valid=%v %s %q, want accepted, saying validation does not apply", l.Valid, c.Status, c.Message)
	}
}

// TestAcceptedListenersKeepUnresolvedCertificates: a listener whose
// certificate Secret is missing stays off the data plane (not valid) but is
// accepted, so the Service keeps its port; a listener Gatewall refuses is
// neither.
func TestAcceptedListenersKeepUnresolvedCertificates(t *testing.T) {
	in := overlayInput(nil, nil)
	gw := in.Gateways[key("default", "gw")]
	gw.Spec.Listeners = append(gw.Spec.Listeners,
		gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "missing"}}}},
		gatewayv1.Listener{Name: "sctp", Port: 5353, Protocol: "SCTP"})
	g := Build(in, key("default", "gw"))
	ports := func(ls []*Listener) map[gatewayv1.PortNumber]bool {
		out := map[gatewayv1.PortNumber]bool{}
		for _, l := range ls {
			out[l.Source.Port] = true
		}
		return out
	}
	valid, accepted := ports(g.ValidListeners()), ports(g.AcceptedListeners())
	if valid[443] || !accepted[443] {
		t.Errorf("the listener without its Secret: valid %v, accepted %v; want accepted only", valid[443], accepted[443])
	}
	if accepted[5353] {
		t.Errorf("the SCTP listener Gatewall refuses is accepted")
	}
	for p := range valid {
		if !accepted[p] {
			t.Errorf("port %d is valid but not accepted", p)
		}
	}
}
