// Package manager_test runs Gatewall's manager against a real API server.
package manager_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
	"github.com/gatewall/gatewall/test/testenv"
)

var (
	env *testenv.Env
	// probes is the address of the running manager's health probes.
	probes string
	// held is the running manager's data plane: the files it would push.
	held = dataplane.NewHeldFiles()
	// storage is the running manager's PLM storage: a real S3 server.
	storage *s3test.Server
)

// storageSecret is the PLM storage's secret key, in the manager's
// credentials Secret plmCredentials.
const (
	storageSecret  = "parity-plm-secret"
	plmCredentials = "plm-storage-credentials"
)

// TestMain starts a real API server and Gatewall's manager (with leader
// election) for every test of the package.
func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, &env, func() (func(), error) { return startManager() }))
}

// eventually is testenv.Eventually.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, cond)
}

// startManager runs the real manager, with PLM storage on a real S3
// server, until the returned stop is called.
func startManager() (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	main := &s3test.Main{}
	if err := main.Run(func() { storage = s3test.Start(main, plmfetch.AccessKeyID, storageSecret, nil) }); err != nil {
		cancel()
		main.Close()
		return nil, fmt.Errorf("starting PLM storage: %w", err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manager.DefaultNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: manager.DefaultNamespace, Name: plmCredentials},
			Data: map[string][]byte{plmfetch.CredentialsSecretKey: []byte(storageSecret)}},
	} {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			cancel()
			main.Close()
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		main.Close()
		return nil, err
	}
	probes = l.Addr().String()
	l.Close()
	mgr, err := manager.New(env.Config, manager.Options{
		ControllerName:   manager.DefaultControllerName,
		GatewayClassName: manager.DefaultGatewayClassName,
		Namespace:        manager.DefaultNamespace,
		MetricsAddr:      "0",
		ProbeAddr:        probes,
		LeaderElection:   true,
		LeaderElectionID: "gatewall-test",
		DataPlane:        held,
		PLM:              manager.PLMOptions{StorageURL: storage.URL(), Bucket: "plm", CacheDir: main.TempDir(), CredentialsSecret: plmCredentials},
		// TestSupportedFeaturesFollowTheCRDs replaces a CRD and waits.
		FieldDiscoveryInterval: 300 * time.Millisecond,
	})
	if err != nil {
		cancel()
		main.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
		main.Close()
	}, nil
}

func TestManager(t *testing.T) {
	ctx := context.Background()

	t.Run("probes", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			eventually(t, 20*time.Second, func() error {
				resp, err := http.Get("http://" + probes + path)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("%s: %s", path, resp.Status)
				}
				return nil
			})
		}
	})

	t.Run("valid NginxProxy is accepted", func(t *testing.T) {
		np := &v1alpha2.NginxProxy{
			ObjectMeta: metav1.ObjectMeta{Name: "valid", Namespace: "default"},
			Spec:       v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(int32(2048))},
		}
		if err := env.Client.Create(ctx, np); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, np, metav1.ConditionTrue, "Accepted", "")
	})

	t.Run("NginxProxy that bypassed the API server's rules is reported invalid", func(t *testing.T) {
		loosenNginxProxyCRD(t)
		np := &v1alpha2.NginxProxy{
			ObjectMeta: metav1.ObjectMeta{Name: "bypassed", Namespace: "default"},
			Spec:       v1alpha2.NginxProxySpec{WAF: "on", WorkerConnections: ptr.To(int32(0))},
		}
		if err := env.Client.Create(ctx, np); err != nil {
			t.Fatalf("the loosened CRD should admit it: %v", err)
		}
		waitCondition(t, np, metav1.ConditionFalse, "Invalid", `spec.waf: Unsupported value: "on"`)
		waitCondition(t, np, metav1.ConditionFalse, "Invalid", "spec.workerConnections: Invalid value: 0")
		eventually(t, 10*time.Second, func() error {
			events := &eventsv1.EventList{}
			if err := env.Client.List(ctx, events, client.InNamespace("default")); err != nil {
				return err
			}
			for _, e := range events.Items {
				if e.Regarding.Name == "bypassed" && e.Type == corev1.EventTypeWarning && e.Reason == "Invalid" {
					return nil
				}
			}
			return fmt.Errorf("no Warning event for the invalid NginxProxy among %d events", len(events.Items))
		})
	})
}

func waitCondition(t *testing.T, np *v1alpha2.NginxProxy, status metav1.ConditionStatus, reason, msg string) {
	t.Helper()
	eventually(t, 15*time.Second, func() error {
		got := &v1alpha2.NginxProxy{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(np), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, "Accepted")
		if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, msg) ||
			c.ObservedGeneration != got.Generation {
			return fmt.Errorf("Accepted condition is %+v, want %s/%s containing %q", c, status, reason, msg)
		}
		return nil
	})
}

// loosenNginxProxyCRD replaces the NginxProxy schema's spec with one that
// admits anything, as an old or tampered CRD would, and restores it afterwards.
func loosenNginxProxyCRD(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	key := client.ObjectKey{Name: "nginxproxies.gateway.nginx.org"}
	if err := env.Client.Get(ctx, key, crd); err != nil {
		t.Fatal(err)
	}
	orig := crd.DeepCopy()
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	props["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	if err := env.Client.Update(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, key, cur); err != nil {
			t.Error(err)
			return
		}
		cur.Spec = orig.Spec
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Error(err)
		}
	})
	// The API server picks up the new schema asynchronously; wait until it admits a bad object.
	eventually(t, 10*time.Second, func() error {
		probe := &v1alpha2.NginxProxy{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "schema-probe-", Namespace: "default"},
			Spec:       v1alpha2.NginxProxySpec{WAF: "probe"},
		}
		if err := env.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return fmt.Errorf("loosened schema not in effect yet: %w", err)
		}
		return nil
	})
}
