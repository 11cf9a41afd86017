// Package latecrds_test installs the CRDs of Gatewall's optional APIs (PLM's
// APPolicy and APLogConf, TLSRoute, ListenerSet, BackendTLSPolicy) on a real
// API server after the manager started, and checks that the manager uses
// them without a restart.
package latecrds_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/manager"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/s3test"
	"github.com/gatewall/gatewall/test/testenv"
)

var env *testenv.Env

// TestMain starts the API server without the optional APIs' CRDs (deleting
// CRDs an API server has served can take minutes on a busy machine).
func TestMain(m *testing.M) {
	var files []string
	for _, f := range lateCRDs(nil) {
		files = append(files, filepath.Base(f))
	}
	os.Exit(testenv.RunWithout(m, &env, files))
}

// lateCRDs are the CRD files of the optional APIs, removed before the
// manager starts and installed while it runs.
func lateCRDs(t *testing.T) []string {
	gw, err := localrun.GatewayAPICRDDir()
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	plmDir := filepath.Join(testenv.RepoRoot(), "config", "plm", "crd")
	return []string{
		filepath.Join(plmDir, "appprotect.f5.com_appolicies.yaml"), filepath.Join(plmDir, "appprotect.f5.com_aplogconfs.yaml"),
		filepath.Join(plmDir, "waf.f5.com_appolicies.yaml"), filepath.Join(plmDir, "waf.f5.com_aplogconfs.yaml"),
		filepath.Join(gw, "gateway.networking.k8s.io_tlsroutes.yaml"),
		filepath.Join(gw, "gateway.networking.k8s.io_listenersets.yaml"),
		filepath.Join(gw, "gateway.networking.k8s.io_backendtlspolicies.yaml"),
	}
}

// removeCRDs deletes the CRDs of the files and waits until they are gone.
func removeCRDs(t *testing.T, files []string) {
	t.Helper()
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	opts := &envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(opts); err != nil {
		t.Fatal(err)
	}
	crds := opts.CRDs
	for _, crd := range crds {
		if err := c.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	// A CRD goes once the API server has cleaned up its objects and stopped
	// serving it: seconds, more on a busy machine.
	eventually(t, 2*time.Minute, func() error {
		for _, crd := range crds {
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s still there (%v)", crd.Name, err)
			}
		}
		return nil
	})
}

func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, cond)
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCRDsInstalledLate: a manager started without the optional APIs' CRDs
// says what is missing and how to fix it, and uses each API once its CRD is
// installed, without a restart: WAF policies resolve their APPolicies and
// get their bundles, TLSRoutes and ListenerSets attach, BackendTLSPolicies
// get statuses.
func TestCRDsInstalledLate(t *testing.T) {
	ctx := context.Background()
	files := lateCRDs(t)
	removeCRDs(t, files)

	const secret = "plm-admin-secret"
	srv := s3test.Start(t, plmfetch.AccessKeyID, secret, nil)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manager.DefaultNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: manager.DefaultNamespace, Name: "plm-credentials"},
			Data: map[string][]byte{plmfetch.CredentialsSecretKey: []byte(secret)}})
	held := dataplane.NewHeldFiles()
	mgr, err := manager.New(env.Config, manager.Options{
		ControllerName: manager.DefaultControllerName, GatewayClassName: manager.DefaultGatewayClassName,
		Namespace: manager.DefaultNamespace, MetricsAddr: "0", ProbeAddr: "0", DataPlane: held,
		PLM: manager.PLMOptions{StorageURL: srv.URL(), Bucket: "plm", CacheDir: t.TempDir(), CredentialsSecret: "plm-credentials"},
		// Faster than the default, for the test.
		APIDiscoveryInterval: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	ns := "late-crds"
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	create(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName}},
		&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waf"}, Spec: v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "waf"}},
			AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}},
			Listeners: []gatewayv1.Listener{
				{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
				{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			},
		}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}},
		&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("http"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "app", Port: ptr.To(gatewayv1.PortNumber(443))}}}}}},
		}},
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "protect"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base"},
		}},
	)

	t.Run("without PLM, the policy says what is missing and what to do", func(t *testing.T) {
		eventually(t, 30*time.Second, func() error {
			c := wafCondition(t, types.NamespacedName{Namespace: ns, Name: "protect"}, "ResolvedRefs")
			if c == nil || !strings.Contains(c.Message, "no PLM APPolicy CRD is installed; install PLM") || !strings.Contains(c.Message, "without a restart") {
				return fmt.Errorf("ResolvedRefs: %+v", c)
			}
			return nil
		})
	})

	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}

	t.Run("PLM installed: the APPolicy resolves and its bundle is delivered", func(t *testing.T) {
		bundle := []byte("bundle of a PLM installed late\n")
		srv.Put(nil, "plm", "base.tgz", bundle)
		ap := &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}}
		eventually(t, 30*time.Second, func() error { return env.Client.Create(ctx, ap) }) // once the CRD serves
		ap.Status = plm.Status{
			Bundle:     &plm.Bundle{State: plm.BundleStateReady, Location: "s3://plm/base.tgz", Sha256: sum(bundle)},
			Processing: &plm.Processing{IsCompiled: true, Datetime: time.Now().UTC().Format(time.RFC3339Nano)},
		}
		if err := env.Client.Status().Update(ctx, ap); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			for _, f := range held.Files(gwKey) {
				if f.Path == policy.BundlePath(sum(bundle)) && string(f.Data) == string(bundle) {
					return nil
				}
			}
			c := wafCondition(t, types.NamespacedName{Namespace: ns, Name: "protect"}, "ResolvedRefs")
			return fmt.Errorf("the bundle is not in the Gateway's files; ResolvedRefs %+v", c)
		})
	})

	t.Run("TLSRoute installed: a TLSRoute attaches", func(t *testing.T) {
		route := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "passthrough"}, Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("tls"))}}},
			Hostnames:       []gatewayv1.Hostname{"secure.example.com"},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "app", Port: ptr.To(gatewayv1.PortNumber(443))}}}}},
		}}
		create(t, route)
		eventually(t, 30*time.Second, func() error {
			r := &gatewayv1.TLSRoute{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(route), r); err != nil {
				return err
			}
			for _, p := range r.Status.Parents {
				if c := meta.FindStatusCondition(p.Conditions, "Accepted"); c != nil && c.Status == metav1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("TLSRoute parents: %+v", r.Status.Parents)
		})
	})

	t.Run("ListenerSet installed: a ListenerSet attaches", func(t *testing.T) {
		h := gatewayv1.Hostname("team.example.com")
		ls := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"},
			Listeners: []gatewayv1.ListenerEntry{{Name: "web", Port: 8080, Protocol: gatewayv1.HTTPProtocolType, Hostname: &h}},
		}}
		create(t, ls)
		eventually(t, 30*time.Second, func() error {
			got := &gatewayv1.ListenerSet{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ls), got); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("ListenerSet Accepted: %+v", c)
			}
			return nil
		})
	})

	t.Run("BackendTLSPolicy installed: its policies get statuses", func(t *testing.T) {
		p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-tls"}, Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Group: "", Kind: "Service", Name: "app"}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "app.example.com", WellKnownCACertificates: ptr.To(gatewayv1.WellKnownCACertificatesSystem)},
		}}
		create(t, p)
		eventually(t, 30*time.Second, func() error {
			got := &gatewayv1.BackendTLSPolicy{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return err
			}
			if len(got.Status.Ancestors) == 0 {
				return fmt.Errorf("the BackendTLSPolicy has no ancestor status")
			}
			return nil
		})
	})
}

func wafCondition(t *testing.T, key types.NamespacedName, typ string) *metav1.Condition {
	t.Helper()
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := env.Client.Get(context.Background(), key, p); err != nil || len(p.Status.Ancestors) == 0 {
		return nil
	}
	return meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, typ)
}
