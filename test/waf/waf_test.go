// Package waf_test runs Gatewall's manager against a real API server and a
// real S3-compatible server (versitygw) playing PLM's storage: the test plays
// PLM itself (uploads bundles, writes APPolicy status).
package waf_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/s3test"
	"github.com/gatewall/gatewall/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const (
	bucket      = "plm"
	adminSecret = "plm-admin-secret"
)

// eventually is testenv.Eventually.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, cond)
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// startManager runs the manager with PLM storage at url, credentials from a
// Secret, until the test ends; it returns the files it would push.
func startManager(t *testing.T, url string) *dataplane.HeldFiles {
	t.Helper()
	createCredentials(t, "plm-storage-credentials")
	return runManager(t, url, "plm-storage-credentials")
}

// createCredentials creates the storage credentials Secret name (and the
// manager's namespace).
func createCredentials(t *testing.T, name string) {
	t.Helper()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manager.DefaultNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: manager.DefaultNamespace, Name: name},
			Data: map[string][]byte{plmfetch.CredentialsSecretKey: []byte(adminSecret)}},
	} {
		if err := env.Client.Create(context.Background(), o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
}

// runManager runs the manager with PLM storage at url and credentials from
// the Secret named credentials, until the test ends.
func runManager(t *testing.T, url, credentials string) *dataplane.HeldFiles {
	t.Helper()
	held, _ := stoppableManager(t, manager.PLMOptions{StorageURL: url, Bucket: bucket, CacheDir: t.TempDir(), CredentialsSecret: credentials})
	return held
}

// stoppableManager runs the manager with PLM options plm until stop is
// called or the test ends; it returns the files the manager would push.
func stoppableManager(t *testing.T, plm manager.PLMOptions) (held *dataplane.HeldFiles, stop func()) {
	t.Helper()
	held = dataplane.NewHeldFiles()
	return held, start(t, managerOptions(held, plm))
}

// managerOptions are the options of a test manager without a data plane
// (held receives its files) and with PLM options plm.
func managerOptions(held *dataplane.HeldFiles, plm manager.PLMOptions) manager.Options {
	return manager.Options{
		ControllerName: manager.DefaultControllerName, GatewayClassName: manager.DefaultGatewayClassName,
		Namespace: manager.DefaultNamespace, MetricsAddr: "0", ProbeAddr: "0",
		DataPlane: held,
		PLM:       plm,
	}
}

// start runs a manager until stop is called or the test ends.
func start(t *testing.T, opts manager.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := manager.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// world is a WAF-enabled Gateway with a route, and the PLM objects.
func world(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName}},
		&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waf"}, Spec: v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "waf"}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}},
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "protect"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base"},
		}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
}

// compiled plays PLM: the APPolicy ns/base's bundle is ready at key with sha.
func compiled(t *testing.T, ns, key, sha string) {
	t.Helper()
	compiledAs(t, types.NamespacedName{Namespace: ns, Name: "base"}, key, sha)
}

// compiledAs plays PLM for the APPolicy ap: its bundle is ready at key with sha.
func compiledAs(t *testing.T, ap types.NamespacedName, key, sha string) {
	t.Helper()
	ctx := context.Background()
	p := &appprotectv1.APPolicy{}
	if err := env.Client.Get(ctx, ap, p); err != nil {
		t.Fatal(err)
	}
	p.Status = plm.Status{
		Bundle:     &plm.Bundle{State: plm.BundleStateReady, Location: "s3://" + bucket + "/" + key, Sha256: sha},
		Processing: &plm.Processing{IsCompiled: true, Datetime: time.Now().UTC().Format(time.RFC3339Nano)},
	}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func wafStatus(t *testing.T, ns string) (*v1alpha1.WAFGatewayBindingPolicy, string) {
	t.Helper()
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "protect"}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Status.Ancestors) != 1 {
		return p, fmt.Sprintf("%d ancestors", len(p.Status.Ancestors))
	}
	var parts []string
	for _, typ := range []string{"Accepted", "ResolvedRefs", "Programmed"} {
		c := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, typ)
		if c == nil {
			parts = append(parts, typ+"=<none>")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s/%s", typ, c.Status, c.Reason))
	}
	return p, strings.Join(parts, " ")
}

func heldBundle(held *dataplane.HeldFiles, gw types.NamespacedName, sha string) ([]byte, bool) {
	for _, f := range held.Files(gw) {
		if f.Path == policy.BundlePath(sha) {
			return f.Data, true
		}
	}
	return nil, false
}

func heldConf(held *dataplane.HeldFiles, gw types.NamespacedName) string {
	for _, f := range held.Files(gw) {
		if f.Path == "/etc/nginx/includes/waf.conf" {
			return string(f.Data)
		}
	}
	return ""
}

// TestBundlesFromPLMStorage: bundles reach the Gateway's files with the right
// bytes; updates replace them; a failed or tampered update leaves the last
// good bundle in force; each sha256 is fetched once.
func TestBundlesFromPLMStorage(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	held := startManager(t, srv.URL())
	ns := "waf-bundles"
	world(t, ns)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	v1, v2 := []byte("compiled bundle v1\n"), []byte("compiled bundle v2\n")
	srv.Put(nil, bucket, "base-v1.tgz", v1)
	srv.Put(nil, bucket, "base-v2.tgz", v2)

	t.Run("first bundle fetched, verified and delivered", func(t *testing.T) {
		compiled(t, ns, "base-v1.tgz", sum(v1))
		eventually(t, 30*time.Second, func() error {
			if data, ok := heldBundle(held, gw, sum(v1)); !ok || string(data) != string(v1) {
				return fmt.Errorf("bundle v1 not in the Gateway's files (found %v)", ok)
			}
			if c := heldConf(held, gw); !strings.Contains(c, "app_protect_policy_file \""+policy.BundlePath(sum(v1))+"\";") {
				return fmt.Errorf("waf.conf: %s", c)
			}
			p, got := wafStatus(t, ns)
			// No data plane runs in this test: Programmed stays Pending.
			if got != "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs Programmed=False/Pending" {
				return fmt.Errorf("status %s", got)
			}
			if s := p.Status.APPolicyStatus; s == nil || s.Bundle.Sha256 != sum(v1) || s.LastFetched == nil {
				return fmt.Errorf("apPolicyStatus %+v", s)
			}
			return nil
		})
	})

	t.Run("update replaces the bundle", func(t *testing.T) {
		compiled(t, ns, "base-v2.tgz", sum(v2))
		eventually(t, 30*time.Second, func() error {
			if _, ok := heldBundle(held, gw, sum(v2)); !ok {
				return fmt.Errorf("bundle v2 not delivered")
			}
			if _, ok := heldBundle(held, gw, sum(v1)); ok {
				return fmt.Errorf("bundle v1 still delivered")
			}
			return nil
		})
	})

	t.Run("a failed update keeps the bundle in force", func(t *testing.T) {
		missing := sum([]byte("never uploaded"))
		compiled(t, ns, "base-v3.tgz", missing)
		eventually(t, 30*time.Second, func() error {
			p, got := wafStatus(t, ns)
			if !strings.Contains(got, "Programmed=False/FetchError") {
				return fmt.Errorf("status %s", got)
			}
			if s := p.Status.APPolicyStatus; s == nil || s.Bundle.Sha256 != sum(v2) {
				return fmt.Errorf("apPolicyStatus should still name v2 in force: %+v", s)
			}
			if c := heldConf(held, gw); !strings.Contains(c, policy.BundlePath(sum(v2))) {
				return fmt.Errorf("v2 is no longer configured: %s", c)
			}
			return nil
		})
	})

	t.Run("a tampered bundle is an IntegrityError and changes nothing", func(t *testing.T) {
		srv.Put(nil, bucket, "base-v4.tgz", []byte("tampered"))
		compiled(t, ns, "base-v4.tgz", sum([]byte("what PLM compiled")))
		eventually(t, 30*time.Second, func() error {
			_, got := wafStatus(t, ns)
			if !strings.Contains(got, "Programmed=False/IntegrityError") {
				return fmt.Errorf("status %s", got)
			}
			if c := heldConf(held, gw); !strings.Contains(c, policy.BundlePath(sum(v2))) {
				return fmt.Errorf("v2 is no longer configured: %s", c)
			}
			return nil
		})
		if n := srv.GetObjectRequests("base-v4.tgz"); n != 1 {
			t.Errorf("the tampered bundle was fetched %d times; an IntegrityError is not retried", n)
		}
	})

	t.Run("PLM processing the object again retries it, same location and sha256", func(t *testing.T) {
		v4 := []byte("what PLM compiled")
		srv.Put(nil, bucket, "base-v4.tgz", v4)
		compiled(t, ns, "base-v4.tgz", sum(v4)) // a new processing.datetime
		eventually(t, 30*time.Second, func() error {
			if data, ok := heldBundle(held, gw, sum(v4)); !ok || string(data) != string(v4) {
				return fmt.Errorf("bundle v4 not delivered (found %v)", ok)
			}
			if c := heldConf(held, gw); !strings.Contains(c, policy.BundlePath(sum(v4))) {
				return fmt.Errorf("waf.conf: %s", c)
			}
			return nil
		})
		if n := srv.GetObjectRequests("base-v4.tgz"); n != 2 {
			t.Errorf("base-v4.tgz was fetched %d times; want 2: once tampered, once after PLM processed it again", n)
		}
	})

	for _, key := range []string{"base-v1.tgz", "base-v2.tgz"} {
		if n := srv.GetObjectRequests(key); n != 1 {
			t.Errorf("%s was fetched %d times, want 1", key, n)
		}
	}
}

// TestFetchesWaitForTheCredentialsSecret: until the configured credentials
// Secret has been read, no bundle is fetched (a fetch without it would fail
// and report a FetchError), and the policy's status names the Secret; once
// it exists, the bundle is fetched once.
func TestFetchesWaitForTheCredentialsSecret(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	const secret = "plm-late-credentials"
	createCredentials(t, "unrelated") // the namespace; not the Secret
	held := runManager(t, srv.URL(), secret)
	ns := "waf-late-secret"
	world(t, ns)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	v1 := []byte("compiled bundle, late credentials\n")
	srv.Put(nil, bucket, "late-v1.tgz", v1)
	compiled(t, ns, "late-v1.tgz", sum(v1))

	want := "PLM storage settings not applied yet: waiting to read Secret " + manager.DefaultNamespace + "/" + secret
	eventually(t, 30*time.Second, func() error {
		p, got := wafStatus(t, ns)
		if !strings.Contains(got, "Programmed=False/Pending") {
			return fmt.Errorf("status %s", got)
		}
		if c := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, "Programmed"); !strings.Contains(c.Message, want) {
			return fmt.Errorf("Programmed message %q; want it to contain %q", c.Message, want)
		}
		return nil
	})
	// The Gateway's reconciles have declared the bundle by now; give a
	// fetch that was not held time to show in the access log.
	time.Sleep(2 * time.Second)
	if n := srv.GetObjectRequests("late-v1.tgz"); n != 0 {
		t.Fatalf("the bundle was fetched %d times before the credentials Secret existed; want 0", n)
	}

	createCredentials(t, secret)
	eventually(t, 30*time.Second, func() error {
		if data, ok := heldBundle(held, gw, sum(v1)); !ok || string(data) != string(v1) {
			return fmt.Errorf("bundle not in the Gateway's files (found %v)", ok)
		}
		return nil
	})
	if n := srv.GetObjectRequests("late-v1.tgz"); n != 1 {
		t.Errorf("the bundle was fetched %d times; want 1", n)
	}
}

// TestCrossNamespaceBundle: an APPolicy in another namespace, allowed by a
// ReferenceGrant, is fetched like a local one, and its failures are
// remembered: a tampered bundle is fetched once however often the policies
// reconcile, and the next good bundle is delivered.
func TestCrossNamespaceBundle(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	held := startManager(t, srv.URL())
	ns, security := "waf-xns", "waf-xns-security"
	world(t, ns)
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: security}},
		&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: security, Name: "base"}},
		&gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: security, Name: "waf-policies"}, Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: "gateway.nginx.org", Kind: "WAFGatewayBindingPolicy", Namespace: gatewayv1.Namespace(ns)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: gatewayv1.Group(appprotectv1.GroupVersion.Group), Kind: "APPolicy"}},
		}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "protect"}, p); err != nil {
		t.Fatal(err)
	}
	p.Spec.APPolicySource.Namespace = ptr.To(security)
	if err := env.Client.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}

	srv.Put(nil, bucket, "xns-tampered.tgz", []byte("tampered"))
	// Not the sha256 of TestBundlesFromPLMStorage's APPolicy, which stays in
	// the API server: the fetcher would merge both (one sha256, one fetch),
	// and that object's location, missing from this test's storage, would
	// turn the IntegrityError into a FetchError.
	compiled(t, security, "xns-tampered.tgz", sum([]byte("what PLM compiled in the security namespace")))
	eventually(t, 30*time.Second, func() error {
		if _, got := wafStatus(t, ns); !strings.Contains(got, "Programmed=False/IntegrityError") {
			return fmt.Errorf("status %s", got)
		}
		return nil
	})
	// Reconciles go on (status writes, notifications); none may fetch again.
	time.Sleep(3 * time.Second)
	if n := srv.GetObjectRequests("xns-tampered.tgz"); n != 1 {
		t.Errorf("the tampered bundle was fetched %d times; an IntegrityError is not retried until PLM's status changes", n)
	}

	good := []byte("compiled bundle from the security namespace\n")
	srv.Put(nil, bucket, "xns-good.tgz", good)
	compiled(t, security, "xns-good.tgz", sum(good))
	eventually(t, 30*time.Second, func() error {
		if data, ok := heldBundle(held, gw, sum(good)); !ok || string(data) != string(good) {
			return fmt.Errorf("the bundle is not in the Gateway's files")
		}
		if _, got := wafStatus(t, ns); got != "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs Programmed=False/Pending" {
			return fmt.Errorf("status %s", got)
		}
		return nil
	})
	if n := srv.GetObjectRequests("xns-good.tgz"); n != 1 {
		t.Errorf("the bundle was fetched %d times, want 1", n)
	}
}
