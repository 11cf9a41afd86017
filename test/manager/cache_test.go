package manager_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/test/certgen"
)

// The tenants' objects TestTenantObjectsStayOutOfTheCache floods the cluster
// with: 160 MiB in all.
const (
	floodSecrets       = 200
	floodSecretSize    = 500 << 10
	floodConfigMaps    = 100
	floodConfigMapSize = 200 << 10 // its data, and again its annotation
	floodDeployments   = 50
	floodDeploymentEnv = 500 << 10
	// heapBudget is how much the managers' live heap may grow meanwhile: a
	// tenth of the flood (their metadata is a few hundred KiB).
	heapBudget = 16 << 20
)

// TestTenantObjectsStayOutOfTheCache: Secrets and ConfigMaps that no
// Gateway references, however many and large (with kubectl's copy of a
// ConfigMap in its last-applied annotation), and tenants' Deployments with
// large pod templates, do not grow the managers' live heap by their size, while a referenced Secret's and ConfigMap's rotation
// still reaches the Gateway's configuration and a provisioned data plane's
// deleted ConfigMap and Secret are restored. Both managers of this process
// are measured: the package's (a Gateway's certificate and client CA, PLM
// storage credentials) and one that provisions data planes.
func TestTenantObjectsStayOutOfTheCache(t *testing.T) {
	ctx := context.Background()
	startProvisioningManager(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, provClass("prov-cache", provController))
	ns := namespace(t)
	provKey := types.NamespacedName{Namespace: ns, Name: "provisioned"}
	create(t, provGateway(ns, provKey.Name, "prov-cache"))
	wantDataPlane(t, ns, "provisioned-prov-cache", true)

	gwKey := types.NamespacedName{Namespace: ns, Name: "tls"}
	cert, ca := issue(t, "first")
	create(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: cert.PEM(), corev1.TLSPrivateKeyKey: certgen.KeyPEM(cert.Key, certgen.PKCS8)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "client-ca"}, Data: map[string]string{"ca.crt": string(ca.PEM())}},
		tlsGateway(ns, gwKey.Name, "cert", "client-ca"))
	waitHeld(t, gwKey, cert.PEM(), ca.PEM())

	before := liveHeap()
	flood(t)
	// The informers deliver events in order: once the managers have acted
	// on these changes, made after the flood, they have seen all of it.
	rotated, rotatedCA := issue(t, "rotated")
	update(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"}}, func(o client.Object) {
		o.(*corev1.Secret).Data = map[string][]byte{corev1.TLSCertKey: rotated.PEM(), corev1.TLSPrivateKeyKey: certgen.KeyPEM(rotated.Key, certgen.PKCS8)}
	})
	update(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "client-ca"}}, func(o client.Object) {
		o.(*corev1.ConfigMap).Data = map[string]string{"ca.crt": string(rotatedCA.PEM())}
	})
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "provisioned-prov-cache-agent"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "provisioned-prov-cache-agent-ca"}},
	} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitHeld(t, gwKey, rotated.PEM(), rotatedCA.PEM())
	wantDataPlane(t, ns, "provisioned-prov-cache", true)

	after := liveHeap()
	grown := int64(after) - int64(before)
	t.Logf("live heap %d MiB before %d MiB of tenants' objects, %d MiB after (%+d KiB)", before>>20,
		(floodSecrets*floodSecretSize+floodConfigMaps*2*floodConfigMapSize+floodDeployments*floodDeploymentEnv)>>20, after>>20, grown>>10)
	if grown > heapBudget {
		t.Errorf("the managers' live heap grew by %d MiB with tenants' Secrets, ConfigMaps and Deployments no Gateway references, want at most %d MiB",
			grown>>20, heapBudget>>20)
	}
}

// issue makes a serving certificate and a CA certificate.
func issue(t *testing.T, name string) (cert, ca *certgen.Cert) {
	t.Helper()
	var err error
	if cert, err = certgen.Issue(certgen.Spec{Name: name, Key: certgen.Key(certgen.P256, 0), Digest: certgen.SHA256}); err != nil {
		t.Fatal(err)
	}
	if ca, err = certgen.Issue(certgen.Spec{Name: name + "-ca", Key: certgen.Key(certgen.P256, 1), Digest: certgen.SHA256, CA: true}); err != nil {
		t.Fatal(err)
	}
	return cert, ca
}

// tlsGateway is a Gateway of the package's class with an HTTPS listener
// whose certificate is in Secret cert and whose clients are checked
// against the CA in ConfigMap clientCA.
func tlsGateway(ns, name, cert, clientCA string) *gatewayv1.Gateway {
	gw := gateway(ns, name)
	gw.Spec.Listeners = []gatewayv1.Listener{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate),
			CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(cert)}}}}}
	gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{Default: gatewayv1.TLSConfig{
		Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{
			{Kind: "ConfigMap", Name: gatewayv1.ObjectName(clientCA)}}}}}}
	return gw
}

// waitHeld waits until the files the package's manager holds for a Gateway
// carry each text.
func waitHeld(t *testing.T, gw types.NamespacedName, texts ...[]byte) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		var all strings.Builder
		for _, f := range held.Files(gw) {
			all.Write(f.Data)
		}
		for _, text := range texts {
			if !strings.Contains(all.String(), string(text)) {
				return fmt.Errorf("the configuration of %s does not carry %.60q...", gw, text)
			}
		}
		return nil
	})
}

// update changes an object, retrying on conflicts.
func update(t *testing.T, o client.Object, change func(client.Object)) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		change(o)
		return env.Client.Update(context.Background(), o)
	})
}

// flood creates the tenants' Secrets, ConfigMaps and Deployments in four
// namespaces of their own, deleted when the test ends.
func flood(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var namespaces []string
	for i := range 4 {
		name := fmt.Sprintf("tenant-flood-%d", i)
		create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		namespaces = append(namespaces, name)
	}
	t.Cleanup(func() {
		for _, ns := range namespaces {
			for _, o := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}, &appsv1.Deployment{}} {
				if err := env.Client.DeleteAllOf(ctx, o, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("cleaning up %s: %v", ns, err)
				}
			}
		}
	})
	for i := range floodSecrets {
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("big-%d", i)},
			Data:       map[string][]byte{"blob": random(t, floodSecretSize)},
		})
	}
	for i := range floodConfigMaps {
		text := base64.StdEncoding.EncodeToString(random(t, floodConfigMapSize*3/4))
		create(t, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("big-%d", i),
				Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": text}},
			Data: map[string]string{"blob": text},
		})
	}
	for i := range floodDeployments {
		labels := map[string]string{"app": fmt.Sprintf("big-%d", i)}
		create(t, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("big-%d", i)},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "busybox", Env: []corev1.EnvVar{
						{Name: "BLOB", Value: base64.StdEncoding.EncodeToString(random(t, floodDeploymentEnv*3/4))}}}}}}},
		})
	}
}

func random(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// liveHeap is the bytes of live objects on this process's heap.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
