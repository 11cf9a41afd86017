package config_test

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestDisableSNIHostValidation: on real NGINX, a request whose Host names
// another listener of the port than its connection's server name is
// answered 421; with the NginxProxy's disableSNIHostValidation it is
// served when the two listeners' TLS settings are the same (connection
// coalescing), and still answered 421 when they differ (ciphers).
func TestDisableSNIHostValidation(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		disable         bool
		same, different int // the statuses of a.example.com's connection asking for b's and c's host
	}{
		{false, http.StatusMisdirectedRequest, http.StatusMisdirectedRequest},
		{true, http.StatusOK, http.StatusMisdirectedRequest},
	} {
		t.Run(fmt.Sprintf("disableSNIHostValidation %v", c.disable), func(t *testing.T) {
			in, pool := tlsInput(t,
				tlsListener("a", 443, "a.example.com", nil),
				tlsListener("b", 443, "b.example.com", nil),
				tlsListener("c", 443, "c.example.com", map[string]string{"nginx.org/ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384"}),
			)
			in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "np"},
				Spec: v1alpha2.NginxProxySpec{DisableSNIHostValidation: ptr.To(c.disable)}})
			in.Gateways[testGateway].Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
				Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "np"}}
			cfg := build(t, in)
			s := serve(t, cfg)
			if err := s.SetEndpoints(cfg.Endpoints()); err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				sni, host string
				want      int
			}{
				{"a.example.com", "a.example.com", http.StatusOK},
				{"a.example.com", "b.example.com", c.same},
				{"a.example.com", "c.example.com", c.different},
				{"c.example.com", "a.example.com", c.different},
			} {
				code, body, err := tlsGetWithSNI(s, 443, q.sni, q.host, pool, &tls.Config{})
				if err != nil || code != q.want || code == http.StatusOK && body != "backend" {
					t.Errorf("server name %s, Host %s: %d %q %v; want %d", q.sni, q.host, code, body, err, q.want)
				}
			}
		})
	}
}
