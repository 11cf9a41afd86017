package waf_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

// TestRestartWithoutBundleHoldsTheGateway: a manager that starts with an
// empty bundle cache while PLM storage is down (a new pod, a new leader)
// never hands the WAF Gateway a configuration without the bundle its
// policy's status records in force: the Gateway waits, its status and the
// policy's say why, the record stays; a Gateway without WAF keeps getting
// its changes. Once storage is back, the bundle is fetched and everything
// held is published, with protection.
func TestRestartWithoutBundleHoldsTheGateway(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	createCredentials(t, "plm-storage-credentials")
	plm := manager.PLMOptions{StorageURL: srv.URL(), Bucket: bucket, CacheDir: t.TempDir(), CredentialsSecret: "plm-storage-credentials"}
	held, stop := stoppableManager(t, plm)
	ns := "waf-restart"
	world(t, ns)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	v1 := []byte("compiled bundle in force across restarts\n")
	srv.Put(nil, bucket, "restart-v1.tgz", v1)
	compiled(t, ns, "restart-v1.tgz", sum(v1))
	eventually(t, 30*time.Second, func() error {
		if _, ok := heldBundle(held, gw, sum(v1)); !ok {
			return fmt.Errorf("bundle v1 not delivered")
		}
		if p, _ := wafStatus(t, ns); p.Status.APPolicyStatus == nil || p.Status.APPolicyStatus.LastFetched == nil {
			return fmt.Errorf("apPolicyStatus does not record v1 in force: %+v", p.Status.APPolicyStatus)
		}
		return nil
	})
	stop()

	// A new manager: its cache is empty and storage is down.
	srv.Stop()
	plm.CacheDir = t.TempDir()
	held, _ = stoppableManager(t, plm)
	create(t, httpRoute(ns, "added-while-held", "gw", "added.example.com"))
	plain := plainGateway(t, ns)
	create(t, httpRoute(ns, "plain-route", "plain", "plain.example.com"))
	eventually(t, 60*time.Second, func() error {
		if !strings.Contains(allFiles(held, plain), "plain.example.com") {
			return fmt.Errorf("the Gateway without WAF did not get its new route")
		}
		c := gatewayProgrammed(t, gw)
		if c == nil || c.Reason != "Pending" || !strings.Contains(c.Message, "holds this Gateway's configuration back") ||
			!strings.Contains(c.Message, sum(v1)[:12]) {
			return fmt.Errorf("Gateway Programmed: %+v", c)
		}
		p, got := wafStatus(t, ns)
		if !strings.Contains(got, "Programmed=False/FetchError") {
			return fmt.Errorf("policy status %s", got)
		}
		if pc := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, "Programmed"); !strings.Contains(pc.Message, "the Gateway's configuration is held") {
			return fmt.Errorf("policy Programmed: %s", pc.Message)
		}
		return nil
	})
	// Reconciles go on meanwhile (statuses, the other Gateway); none may
	// publish the WAF Gateway without its bundle.
	time.Sleep(3 * time.Second)
	if files := held.Files(gw); files != nil {
		t.Fatalf("the WAF Gateway's configuration was published without its bundle in force:\n%s", heldConf(held, gw))
	}
	if p, _ := wafStatus(t, ns); p.Status.APPolicyStatus == nil || p.Status.APPolicyStatus.Bundle.Sha256 != sum(v1) || p.Status.APPolicyStatus.LastFetched == nil {
		t.Fatalf("while held, apPolicyStatus lost its record of v1 in force: %+v", p.Status.APPolicyStatus)
	}

	srv.Resume()
	eventually(t, 60*time.Second, func() error {
		if data, ok := heldBundle(held, gw, sum(v1)); !ok || string(data) != string(v1) {
			return fmt.Errorf("bundle v1 not delivered after storage came back")
		}
		if !strings.Contains(allFiles(held, gw), "added.example.com") {
			return fmt.Errorf("the route added while held is not in the configuration")
		}
		if c := gatewayProgrammed(t, gw); c == nil || strings.Contains(c.Message, "holds this Gateway's configuration back") {
			return fmt.Errorf("Gateway Programmed: %+v", c)
		}
		return nil
	})
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
}

// httpRoute is a route of Gateway gw for host, to a Service that need not
// exist: its server block is what tests look for.
func httpRoute(ns, name, gw, host string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
		Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "app", Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
	}}
}

// plainGateway creates a Gateway of the class without WAF.
func plainGateway(t *testing.T, ns string) types.NamespacedName {
	t.Helper()
	create(t, &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-waf"}, Spec: v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFDisabled}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "no-waf"}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}})
	return types.NamespacedName{Namespace: ns, Name: "plain"}
}

// allFiles is every file the manager would push to a Gateway, concatenated.
func allFiles(held *dataplane.HeldFiles, gw types.NamespacedName) string {
	var b strings.Builder
	for _, f := range held.Files(gw) {
		b.Write(f.Data)
	}
	return b.String()
}

func gatewayProgrammed(t *testing.T, key types.NamespacedName) *metav1.Condition {
	t.Helper()
	g := &gatewayv1.Gateway{}
	if err := env.Client.Get(context.Background(), key, g); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(g.Status.Conditions, "Programmed")
}
