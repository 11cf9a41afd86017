package scale

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	bigint "math/big"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/test/testenv"
)

// The big Gateway "gw": listener "http" on port 80 for every route, and
// HTTPS listener k (k < certs) on port 443 for host routeHost(k) with its own
// certificate Secret cert-<k>. The last HTTPS listener is in ListenerSet
// "more" (a Gateway holds at most 64 listeners), and its route attaches to
// both.

func routeHost(i int) string { return fmt.Sprintf("r%d.scale.test", i) }

func routeName(i int) string { return fmt.Sprintf("r%d", i) }

func certName(k int) string { return fmt.Sprintf("cert-%d", k) }

func httpsListener(k int) gatewayv1.Listener {
	return gatewayv1.Listener{
		Name: gatewayv1.SectionName(fmt.Sprintf("https-%d", k)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
		Hostname: ptr.To(gatewayv1.Hostname(routeHost(k))),
		TLS: &gatewayv1.ListenerTLSConfig{
			Mode:            ptr.To(gatewayv1.TLSModeTerminate),
			CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(certName(k))}},
		},
	}
}

// bigGateway is the Gateway with certs-1 HTTPS listeners, and the
// ListenerSet with the last.
func bigGateway(ns string, certs int) (*gatewayv1.Gateway, *gatewayv1.ListenerSet) {
	gw := testenv.Gateway(ns, "gw")
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}}
	for k := 0; k < certs-1; k++ {
		gw.Spec.Listeners = append(gw.Spec.Listeners, httpsListener(k))
	}
	last := httpsListener(certs - 1)
	ls := &gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "more"},
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"},
			Listeners: []gatewayv1.ListenerEntry{{Name: last.Name, Hostname: last.Hostname, Port: last.Port, Protocol: last.Protocol, TLS: last.TLS}},
		},
	}
	return gw, ls
}

// route is route i of the big Gateway, to Service svc; the route of the
// ListenerSet's listener attaches to the ListenerSet as well.
func route(ns string, i, certs int, svc string) *gatewayv1.HTTPRoute {
	r := testenv.HTTPRoute(ns, routeName(i), "gw", routeHost(i), "/", svc)
	if i == certs-1 {
		r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{
			Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("ListenerSet")), Name: "more",
		})
	}
	return r
}

// certSecret is a self-signed ECDSA certificate for host, as a TLS Secret.
func certSecret(t *testing.T, ns, name, host string) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: bigint.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
}

// createAll creates objs with a few workers in parallel, through a client
// allowed enough requests a second to create thousands of objects quickly.
func createAll(t *testing.T, objs []client.Object) {
	t.Helper()
	cfg := *rt.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(&cfg, client.Options{Scheme: rt.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 16
	work := make(chan client.Object)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := c.Create(context.Background(), o); client.IgnoreAlreadyExists(err) != nil {
					select {
					case errs <- fmt.Errorf("creating %T %s: %w", o, o.GetName(), err):
					default:
					}
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}
