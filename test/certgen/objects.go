package certgen

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Objects are a Gateway gw of class, in namespace ns, that uses a
// material every way Gatewall takes certificates: listener https (443)
// serves the certificate of Secret cert; listener validated (8443) serves
// it too and validates clients with the CA of ConfigMap ca; the Gateway
// presents the certificate to backends; its HTTPRoute route (on listener
// http) has one backend, Service backend, verified with the CA
// (BackendTLSPolicy tls).
func Objects(ns, class string, m Material) []any {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	https := func(name string, port gatewayv1.PortNumber) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}}
	}
	return []any{
		&gatewayv1.Gateway{ObjectMeta: meta("gw"), Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(class),
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}, https("https", 443), https("validated", 8443)},
			TLS: &gatewayv1.GatewayTLSConfig{
				Backend: &gatewayv1.GatewayBackendTLS{ClientCertificateRef: &gatewayv1.SecretObjectReference{Name: "cert"}},
				Frontend: &gatewayv1.FrontendTLSConfig{PerPort: []gatewayv1.TLSPortConfig{{Port: 8443, TLS: gatewayv1.TLSConfig{
					Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}}}}},
			},
		}},
		&corev1.Secret{ObjectMeta: meta("cert"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: m.Cert, corev1.TLSPrivateKeyKey: m.Key}},
		&corev1.ConfigMap{ObjectMeta: meta("ca"), Data: map[string]string{"ca.crt": string(m.CA)}},
		&gatewayv1.HTTPRoute{ObjectMeta: meta("route"), Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("http"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "backend", Port: ptr.To(gatewayv1.PortNumber(443))}}}}}},
		}},
		&corev1.Service{ObjectMeta: meta("backend"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend-1", Labels: map[string]string{discoveryv1.LabelServiceName: "backend"}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(8443))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.10"}}}},
		&gatewayv1.BackendTLSPolicy{ObjectMeta: meta("tls"), Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "backend"}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "backend.example.com",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}}}}},
	}
}
