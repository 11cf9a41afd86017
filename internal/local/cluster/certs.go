package cluster

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// writeServingCerts writes the API server's serving certificate and key
// (apiserver.crt, apiserver.key) and service-account signing key pair
// (sa-signer.crt, sa-signer.key) into certDir, where envtest looks for them
// before making its own, and returns the CA that clients verify the server
// with. envtest's own certificate names only localhost: pods reach the API
// server as the `kubernetes` Service (its first cluster IP and DNS names)
// and nodes at the advertised address.
func writeServingCerts(certDir string, o Options) ([]byte, error) {
	ca, err := issuer.NewCA("gatewall-local-apiserver-ca")
	if err != nil {
		return nil, err
	}
	svc, err := netip.ParsePrefix(o.ServiceCIDR)
	if err != nil {
		return nil, fmt.Errorf("service CIDR %q: %w", o.ServiceCIDR, err)
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(o.AdvertiseAddress), net.IP(svc.Masked().Addr().Next().AsSlice())}
	names := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	serving, err := ca.IssueServing("kube-apiserver", ips, names)
	if err != nil {
		return nil, err
	}
	if _, _, err := serving.WriteFiles(certDir, "apiserver"); err != nil {
		return nil, err
	}
	signer, err := ca.IssueClient("service-account-signer", nil)
	if err != nil {
		return nil, err
	}
	if _, _, err := signer.WriteFiles(certDir, "sa-signer"); err != nil {
		return nil, err
	}
	return ca.CertPEM(), nil
}
