package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/localrun"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/s3test"
)

const plmSecret = "plm-e2e-secret"

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// withPLM rolls the manager out with PLM storage srv (a server on the host's
// loopback, which pods reach through a forward on the node's address) until
// the test ends.
func withPLM(t *testing.T, srv *s3test.Server) {
	t.Helper()
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: localrun.ManagerNamespace, Name: "plm-credentials"},
		Data: map[string][]byte{plmfetch.CredentialsSecretKey: []byte(plmSecret)}})
	addr, err := rt.Node.Forward(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := rt.Redeploy(ctx, "--plm-storage-url=http://"+addr, "--plm-storage-bucket=plm", "--plm-storage-credentials-secret=plm-credentials"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Redeploy(ctx); err != nil {
			t.Error(err)
		}
	})
}

// compile plays PLM: the APPolicy's bundle is ready at key.
func compile(t *testing.T, key types.NamespacedName, bundleKey string, data []byte) {
	t.Helper()
	p := &appprotectv1.APPolicy{}
	if err := rt.Client.Get(context.Background(), key, p); err != nil {
		t.Fatal(err)
	}
	p.Status = plm.Status{
		Bundle:     &plm.Bundle{State: plm.BundleStateReady, Location: "s3://plm/" + bundleKey, Sha256: sha(data)},
		Processing: &plm.Processing{IsCompiled: true, Datetime: time.Now().UTC().Format(time.RFC3339Nano)},
	}
	if err := rt.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// protectedBy sends an attack marker through the Gateway and returns the
// policy bundle the App Protect test double says blocked it ("" if not blocked).
func protectedBy(addr, host string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	return blockedBy(httpClient, req)
}

// blockedBy sends req with the attack marker and returns the policy bundle
// the App Protect test double says blocked it ("" if not blocked).
func blockedBy(c *http.Client, req *http.Request) (string, error) {
	req.Header.Set("X-Gatewall-Test-Attack", "1")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		return "", nil
	}
	return resp.Header.Get("X-Gatewall-Test-Policy"), nil
}

func wafPolicyConditions(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := rt.Client.Get(context.Background(), key, p); err != nil || len(p.Status.Ancestors) == 0 {
		return fmt.Sprintf("no status (%v)", err)
	}
	var parts []string
	for _, typ := range []string{"Accepted", "ResolvedRefs", "Programmed"} {
		if c := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, typ); c != nil {
			parts = append(parts, fmt.Sprintf("%s=%s/%s", typ, c.Status, c.Reason))
		}
	}
	return strings.Join(parts, " ")
}

// wafGateway creates a WAF-enabled Gateway with an echo route and its policy.
func wafGateway(t *testing.T, ns, name, apPolicy string) types.NamespacedName {
	t.Helper()
	return wafGatewayWith(t, ns, name, apPolicy, v1alpha2.NginxProxySpec{})
}

// wafGatewayWith is wafGateway with the Gateway's NginxProxy spec (WAF is
// enabled in it).
func wafGatewayWith(t *testing.T, ns, name, apPolicy string, spec v1alpha2.NginxProxySpec) types.NamespacedName {
	t.Helper()
	spec.WAF = v1alpha2.WAFEnabled
	create(t,
		&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waf-" + name}, Spec: spec},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "waf-" + name}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		httpRoute(ns, name+"-route", name, "app.example.com", "/", "echo"),
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-waf"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: gatewayv1.ObjectName(name)}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: apPolicy},
		}},
	)
	return types.NamespacedName{Namespace: ns, Name: name}
}

// TestWAF plays PLM (uploads bundles, writes APPolicy status): the bundle
// reaches the data plane and protects the Gateway's routes; an update
// replaces it; a bundle the data plane refuses is reported as a
// DeploymentError while the last good configuration keeps serving and
// protecting.
func TestWAF(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	ns := namespace(t, "e2e-waf")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	create(t, &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}})
	apKey := types.NamespacedName{Namespace: ns, Name: "base"}
	gw := wafGateway(t, ns, "gw", "base")
	policyKey := types.NamespacedName{Namespace: ns, Name: "gw-waf"}
	v1, v2 := []byte("bundle v1\n"), []byte("bundle v2\n")
	srv.Put(nil, "plm", "base-v1.tgz", v1)
	srv.Put(nil, "plm", "base-v2.tgz", v2)
	compile(t, apKey, "base-v1.tgz", v1)
	addr := programmedAddress(t, gw, 120*time.Second)

	t.Run("bundle delivered, policy programmed, routes protected", func(t *testing.T) {
		serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
		eventually(t, 60*time.Second, func() error {
			if got := wafPolicyConditions(t, policyKey); got != "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs Programmed=True/Programmed" {
				return fmt.Errorf("policy: %s", got)
			}
			if p, err := protectedBy(addr, "app.example.com"); err != nil || p != policy.BundlePath(sha(v1)) {
				return fmt.Errorf("attack blocked by %q (%v), want bundle v1", p, err)
			}
			return nil
		})
	})

	t.Run("an APPolicy update reaches the data plane", func(t *testing.T) {
		start := time.Now()
		compile(t, apKey, "base-v2.tgz", v2)
		eventually(t, 60*time.Second, func() error {
			if p, err := protectedBy(addr, "app.example.com"); err != nil || p != policy.BundlePath(sha(v2)) {
				return fmt.Errorf("attack blocked by %q (%v), want bundle v2", p, err)
			}
			return nil
		})
		t.Logf("APPolicy status change to the new bundle enforced: %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("a bundle the data plane refuses: DeploymentError, last good config stays", func(t *testing.T) {
		bad := []byte("INCOMPATIBLE: compiled for App Protect 99\n")
		srv.Put(nil, "plm", "base-v3.tgz", bad)
		compile(t, apKey, "base-v3.tgz", bad)
		eventually(t, 90*time.Second, func() error {
			got := wafPolicyConditions(t, policyKey)
			if !strings.Contains(got, "Programmed=False/DeploymentError") {
				return fmt.Errorf("policy: %s", got)
			}
			g := &gatewayv1.Gateway{}
			if err := rt.Client.Get(context.Background(), gw, g); err != nil {
				return err
			}
			c := meta.FindStatusCondition(g.Status.Conditions, "Programmed")
			if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "compiled for another App Protect version") {
				return fmt.Errorf("Gateway Programmed: %+v", c)
			}
			return nil
		})
		serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 10*time.Second)
		if p, err := protectedBy(addr, "app.example.com"); err != nil || p != policy.BundlePath(sha(v2)) {
			t.Errorf("after the refused update the attack is blocked by %q (%v), want the last good bundle v2", p, err)
		}
	})
}
