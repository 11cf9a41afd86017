package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/s3test"
	"github.com/gatewall/gatewall/test/testenv"
)

// plmStatus is a compiled bundle's PLM status, processed now.
func plmStatus(bundleKey string, data []byte) plm.Status {
	return plm.Status{
		Bundle:     &plm.Bundle{State: plm.BundleStateReady, Location: "s3://plm/" + bundleKey, Sha256: sha(data)},
		Processing: &plm.Processing{IsCompiled: true, Datetime: time.Now().UTC().Format(time.RFC3339Nano)},
	}
}

// compileLog plays PLM for an APLogConf: its bundle is ready at key.
func compileLog(t *testing.T, key types.NamespacedName, bundleKey string, data []byte) {
	t.Helper()
	l := &appprotectv1.APLogConf{}
	if err := rt.Client.Get(context.Background(), key, l); err != nil {
		t.Fatal(err)
	}
	l.Status = plmStatus(bundleKey, data)
	if err := rt.Client.Status().Update(context.Background(), l); err != nil {
		t.Fatal(err)
	}
}

// syslogReceiver collects the datagrams data-plane pods send to it, on the
// host's end of the node's uplink (which pods reach).
type syslogReceiver struct {
	addr string
	mu   sync.Mutex
	got  []string
}

func startSyslog(t *testing.T) *syslogReceiver {
	t.Helper()
	conn, err := net.ListenPacket("udp", net.JoinHostPort(rt.Node.Network().HostIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &syslogReceiver{addr: conn.LocalAddr().String()}
	go func() {
		buf := make([]byte, 8192)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.got = append(s.got, string(buf[:n]))
			s.mu.Unlock()
		}
	}()
	return s
}

// has says whether a received message contains every part.
func (s *syslogReceiver) has(parts ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.got {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(m, p)
		}
		if all {
			return true
		}
	}
	return false
}

// grpcProtectedBy sends a gRPC request (HTTP/2 with prior knowledge, over
// cleartext) carrying the attack marker, and returns the policy bundle the
// App Protect test double says blocked it ("" if not blocked).
func grpcProtectedBy(addr, host string) (string, error) {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true) // prior knowledge, as gRPC clients speak it
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, "http://"+net.JoinHostPort(addr, "80")+"/grpc.gateway_api_conformance.echoserver.GrpcEcho/Echo", strings.NewReader("\x00\x00\x00\x00\x00"))
	if err != nil {
		return "", err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/grpc")
	return blockedBy(&http.Client{Transport: tr, Timeout: 5 * time.Second}, req)
}

func securityLog(name, logConf string, dest v1alpha1.SecurityLogDestination) v1alpha1.SecurityLog {
	return v1alpha1.SecurityLog{Name: ptr.To(name), APLogConfSource: v1alpha1.PLMObjectReference{Name: logConf}, Destination: dest}
}

// routeAffected is the WAF Affected condition of a route's parent status.
func routeAffected(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	r := &gatewayv1.HTTPRoute{}
	if err := rt.Client.Get(context.Background(), key, r); err != nil || len(r.Status.Parents) == 0 {
		return ""
	}
	if c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, v1alpha1.WAFGatewayBindingPolicyAffected); c != nil {
		return c.Message
	}
	return ""
}

// TestWAFRouteOverrideLogsAndGRPC: a Gateway policy protects the Gateway's
// HTTPRoutes and its GRPCRoute; a route's own policy replaces it there; the
// policies' log profiles reach their destinations (the container log for
// Stderr, a syslog server for Syslog; a File destination loads, its
// content is not read back here); the routes' statuses name the policy and
// the bundle that protect them.
func TestWAFRouteOverrideLogsAndGRPC(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	ns := namespace(t, "e2e-waf-routes")
	gatewayClass(t)
	syslog := startSyslog(t)
	create(t, echo(ns, "echo", 1)...)
	create(t, grpcBackend(ns, "rpc")...)
	base, strict, logAll, logBlocked := []byte("bundle base\n"), []byte("bundle strict\n"), []byte("log profile all\n"), []byte("log profile blocked\n")
	for k, v := range map[string][]byte{"base.tgz": base, "strict.tgz": strict, "log-all.tgz": logAll, "log-blocked.tgz": logBlocked} {
		srv.Put(nil, "plm", k, v)
	}
	create(t,
		&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}},
		&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "strict"}},
		&appprotectv1.APLogConf{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "log-all"}},
		&appprotectv1.APLogConf{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "log-blocked"}},
		&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waf"}, Spec: v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "waf"}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		httpRoute(ns, "app", "gw", "app.example.com", "/", "echo"),
		httpRoute(ns, "admin", "gw", "admin.example.com", "/", "echo"),
		&gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rpc"}, Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"rpc.example.com"},
			Rules: []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "rpc", Port: ptr.To(gatewayv1.PortNumber(8080))}}}}}},
		}},
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gateway"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base"},
			SecurityLogs: []v1alpha1.SecurityLog{
				securityLog("all-to-stderr", "log-all", v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationStderr}),
				securityLog("blocked-to-syslog", "log-blocked", v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationSyslog,
					Syslog: &v1alpha1.SyslogDestination{Server: syslog.addr}}),
				securityLog("blocked-to-file", "log-blocked", v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationFile,
					File: &v1alpha1.FileDestination{Path: "/var/log/app_protect/blocked.log"}}),
			},
		}},
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "admin"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "strict"},
			SecurityLogs: []v1alpha1.SecurityLog{securityLog("all-to-syslog", "log-all", v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationSyslog,
				Syslog: &v1alpha1.SyslogDestination{Server: syslog.addr}})},
		}},
	)
	compile(t, types.NamespacedName{Namespace: ns, Name: "base"}, "base.tgz", base)
	compile(t, types.NamespacedName{Namespace: ns, Name: "strict"}, "strict.tgz", strict)
	compileLog(t, types.NamespacedName{Namespace: ns, Name: "log-all"}, "log-all.tgz", logAll)
	compileLog(t, types.NamespacedName{Namespace: ns, Name: "log-blocked"}, "log-blocked.tgz", logBlocked)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	addr := programmedAddress(t, gw, 120*time.Second)
	serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)

	t.Run("the Gateway's policy protects its routes, the route's own replaces it", func(t *testing.T) {
		eventually(t, 90*time.Second, func() error {
			if p, err := protectedBy(addr, "app.example.com"); err != nil || p != policy.BundlePath(sha(base)) {
				return fmt.Errorf("app: blocked by %q (%v), want the Gateway's bundle", p, err)
			}
			if p, err := protectedBy(addr, "admin.example.com"); err != nil || p != policy.BundlePath(sha(strict)) {
				return fmt.Errorf("admin: blocked by %q (%v), want the route's own bundle", p, err)
			}
			return nil
		})
	})

	t.Run("a GRPCRoute is protected", func(t *testing.T) {
		eventually(t, 30*time.Second, func() error {
			if p, err := grpcProtectedBy(addr, "rpc.example.com"); err != nil || p != policy.BundlePath(sha(base)) {
				return fmt.Errorf("gRPC: blocked by %q (%v), want the Gateway's bundle", p, err)
			}
			return nil
		})
	})

	t.Run("the routes' statuses name the policy and the bundle", func(t *testing.T) {
		eventually(t, 30*time.Second, func() error {
			app := routeAffected(t, types.NamespacedName{Namespace: ns, Name: "app"})
			if !strings.Contains(app, "WAFGatewayBindingPolicy "+ns+"/gateway, inherited from Gateway "+gw.String()) || !strings.Contains(app, sha(base)) {
				return fmt.Errorf("app's Affected: %q", app)
			}
			admin := routeAffected(t, types.NamespacedName{Namespace: ns, Name: "admin"})
			if !strings.Contains(admin, "WAFGatewayBindingPolicy "+ns+"/admin (the route's own") || !strings.Contains(admin, sha(strict)) {
				return fmt.Errorf("admin's Affected: %q", admin)
			}
			return nil
		})
	})

	t.Run("each log profile reaches its destination", func(t *testing.T) {
		eventually(t, 60*time.Second, func() error {
			for _, host := range []string{"app.example.com", "admin.example.com"} {
				if _, err := protectedBy(addr, host); err != nil {
					return err
				}
			}
			if !syslog.has("policy="+policy.BundlePath(sha(base)), "profile="+policy.BundlePath(sha(logBlocked))) {
				return fmt.Errorf("syslog has no line of the Gateway's blocked-requests profile")
			}
			if !syslog.has("policy="+policy.BundlePath(sha(strict)), "profile="+policy.BundlePath(sha(logAll))) {
				return fmt.Errorf("syslog has no line of the route's profile")
			}
			pods, err := rt.RunningPods(context.Background(), ns, map[string]string{provisioner.GatewayNameLabel: "gw"})
			if err != nil || len(pods) == 0 {
				return fmt.Errorf("data-plane pods: %d (%v)", len(pods), err)
			}
			lines, err := containerLog(pods[0], "nginx")
			if err != nil {
				return err
			}
			want := "policy=" + policy.BundlePath(sha(base)) + " profile=" + policy.BundlePath(sha(logAll))
			for _, l := range lines {
				if strings.Contains(l, "gatewall-test-waf: blocked") && strings.Contains(l, want) {
					return nil
				}
			}
			return fmt.Errorf("the data plane's log has no line of the Gateway's stderr profile (%d lines)", len(lines))
		})
	})
}

// containerLog reads one container's log, the kubelet's way.
func containerLog(p corev1.Pod, container string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	data, err := rt.Clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return strings.Split(string(data), "\n"), nil
}

// attacks sends the attack marker through the Gateway every 20 ms and
// counts what it meets: blocked by the bundle want, served (unprotected),
// or a failure.
type attacks struct {
	blocked, unprotected, failed atomic.Int64
	stop, done                   chan struct{}
	once                         sync.Once
}

func startAttacks(t *testing.T, addr, host, want string) *attacks {
	a := &attacks{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for {
			select {
			case <-a.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			switch p, err := protectedBy(addr, host); {
			case err != nil:
				a.failed.Add(1)
				t.Logf("attack request failed: %v", err)
			case p == want:
				a.blocked.Add(1)
			default:
				a.unprotected.Add(1)
				t.Logf("attack request not blocked by %s: blocked by %q", want, p)
			}
		}
	}()
	t.Cleanup(func() { a.Stop() })
	return a
}

func (a *attacks) Stop() (blocked, unprotected, failed int64) {
	a.once.Do(func() { close(a.stop); <-a.done })
	return a.blocked.Load(), a.unprotected.Load(), a.failed.Load()
}

func gatewayProgrammedMessage(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	g := &gatewayv1.Gateway{}
	if err := rt.Client.Get(context.Background(), key, g); err != nil {
		return err.Error()
	}
	if c := meta.FindStatusCondition(g.Status.Conditions, "Programmed"); c != nil {
		return string(c.Status) + "/" + c.Reason + ": " + c.Message
	}
	return ""
}

// TestWAFHeldAcrossRestartAndTakeover: PLM storage goes down; the manager
// restarts (a new pod, its bundle cache empty), then two replicas run and
// the leader is killed (the new leader's cache empty too). Neither pushes
// the WAF Gateway's configuration without its bundle: a route added
// meanwhile waits, the Gateway's status says why, and not one attack is
// served unprotected; a Gateway without WAF gets its change at once. Once
// storage is back, the waiting change is served, protected.
func TestWAFHeldAcrossRestartAndTakeover(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	ns := namespace(t, "e2e-waf-held")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	create(t, &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}})
	gw := wafGateway(t, ns, "gw", "base")
	create(t, gateway(ns, "plain"))
	v1 := []byte("bundle in force while storage is down\n")
	srv.Put(nil, "plm", "held-v1.tgz", v1)
	compile(t, types.NamespacedName{Namespace: ns, Name: "base"}, "held-v1.tgz", v1)
	addr := programmedAddress(t, gw, 120*time.Second)
	plainAddr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "plain"}, 120*time.Second)
	want := policy.BundlePath(sha(v1))
	eventually(t, 60*time.Second, func() error {
		if p, err := protectedBy(addr, "app.example.com"); err != nil || p != want {
			return fmt.Errorf("blocked by %q (%v), want bundle v1", p, err)
		}
		return nil
	})
	attack := startAttacks(t, addr, "app.example.com", want)
	srv.Stop()

	held := func(what string) {
		t.Helper()
		eventually(t, 90*time.Second, func() error {
			if m := gatewayProgrammedMessage(t, gw); !strings.Contains(m, "holds this Gateway's configuration back") || !strings.Contains(m, sha(v1)[:12]) {
				return fmt.Errorf("%s: the WAF Gateway's Programmed is %q", what, m)
			}
			return nil
		})
		if code, _, err := get(addr, "added.example.com", "/"); err != nil || code != 404 {
			t.Errorf("%s: the route added while held answers %d (%v): its configuration was pushed without the bundle", what, code, err)
		}
	}

	t.Run("a restarted manager without the bundle holds the WAF Gateway back", func(t *testing.T) {
		if err := rt.ScaleManager(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if err := rt.ScaleManager(ctx, 1); err != nil {
			t.Fatal(err)
		}
		create(t, httpRoute(ns, "added", "gw", "added.example.com", "/", "echo"), httpRoute(ns, "plain-route", "plain", "plain.example.com", "/", "echo"))
		serves(t, plainAddr, "plain.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
		held("after the restart")
	})

	t.Run("a new leader without the bundle holds it back too", func(t *testing.T) {
		if err := rt.ScaleManager(ctx, 2); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := rt.ScaleManager(context.Background(), 1); err != nil {
				t.Error(err)
			}
		})
		killLeader(t, rt.LeaderName(ctx))
		held("after the takeover")
	})

	t.Run("storage back: the held change is served, protected", func(t *testing.T) {
		srv.Resume()
		serves(t, addr, "added.example.com", "/", 200, `"pod": "echo-`, 120*time.Second)
		if p, err := protectedBy(addr, "added.example.com"); err != nil || p != want {
			t.Errorf("the added route is blocked by %q (%v), want bundle v1", p, err)
		}
	})

	blocked, unprotected, failed := attack.Stop()
	if unprotected != 0 || failed != 0 {
		t.Errorf("across the restart and the takeover with storage down: %d attacks served unprotected, %d failed, %d blocked; want 0 unprotected and 0 failed",
			unprotected, failed, blocked)
	}
	t.Logf("%d attacks, all blocked by the bundle in force, across a manager restart and a leader kill with PLM storage down", blocked)
}

// TestWAFLatePLMCRDs: a manager that started before PLM's CRDs were
// installed says so in the policy's status, with the remedy, and uses them
// once they are installed, without a restart: the bundle is enforced.
func TestWAFLatePLMCRDs(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	// Both of PLM's API groups go (the manager would use the other), and
	// PLM's own (appprotect.f5.com) comes back.
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "plm", "crd", "*.yaml"))
	if err != nil || len(files) != 4 {
		t.Fatalf("PLM's CRD files: %v (%v)", files, err)
	}
	crds, err := manifest.ReadFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	var appprotect []*unstructured.Unstructured
	for _, crd := range crds {
		if strings.HasSuffix(crd.GetName(), "."+appprotectv1.GroupVersion.Group) {
			appprotect = append(appprotect, crd)
		}
	}
	// Apply writes the server's answer into what it applies: copies keep
	// the files' objects as they are for the next apply.
	install := func(crds []*unstructured.Unstructured) error {
		copies := make([]*unstructured.Unstructured, len(crds))
		for i, crd := range crds {
			copies[i] = crd.DeepCopy()
		}
		return manifest.Apply(ctx, rt.Client, "e2e-late-plm", copies)
	}
	t.Cleanup(func() {
		if err := install(crds); err != nil {
			t.Error(err)
		}
	})

	// The manager starts while PLM's CRDs are not installed.
	if err := rt.ScaleManager(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if err := rt.Client.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, func() error {
		for _, crd := range crds {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(crd.GroupVersionKind())
			if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(crd), u); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s still there (%v)", crd.GetName(), err)
			}
		}
		return nil
	})
	if err := rt.ScaleManager(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-waf-late-plm")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	gw := wafGateway(t, ns, "gw", "base")
	policyKey := types.NamespacedName{Namespace: ns, Name: "gw-waf"}
	eventually(t, 60*time.Second, func() error {
		p := &v1alpha1.WAFGatewayBindingPolicy{}
		if err := rt.Client.Get(ctx, policyKey, p); err != nil || len(p.Status.Ancestors) == 0 {
			return fmt.Errorf("no status (%v)", err)
		}
		c := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, "ResolvedRefs")
		if c == nil || !strings.Contains(c.Message, "no PLM APPolicy CRD is installed; install PLM") {
			return fmt.Errorf("ResolvedRefs: %+v", c)
		}
		return nil
	})

	if err := install(appprotect); err != nil {
		t.Fatal(err)
	}
	bundle := []byte("bundle of a PLM installed after Gatewall\n")
	srv.Put(nil, "plm", "late.tgz", bundle)
	ap := &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}}
	eventually(t, 30*time.Second, func() error { return rt.Client.Create(ctx, ap) }) // once the CRD serves
	compile(t, types.NamespacedName{Namespace: ns, Name: "base"}, "late.tgz", bundle)
	addr := programmedAddress(t, gw, 120*time.Second)
	eventually(t, 90*time.Second, func() error {
		if p, err := protectedBy(addr, "app.example.com"); err != nil || p != policy.BundlePath(sha(bundle)) {
			return fmt.Errorf("blocked by %q (%v), want the bundle of the APPolicy created after PLM's CRDs", p, err)
		}
		return nil
	})
}

// TestWAFImageWithoutAppProtect: a WAF Gateway whose data plane runs the
// default image, which has no App Protect module, is not a silent unready
// pod: its Programmed condition carries NGINX's refusal and says which
// image WAF needs.
func TestWAFImageWithoutAppProtect(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	ns := namespace(t, "e2e-waf-no-module")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	create(t, &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}})
	repo, tag, _ := strings.Cut(images.DataPlane, ":")
	// A class that lets its Gateways choose their images (a Gateway's own
	// NginxProxy may not otherwise: graph/overrides.go).
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{
		ControllerName: manager.DefaultControllerName,
		ParametersRef: &gatewayv1.ParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "class",
			Namespace: ptr.To(gatewayv1.Namespace(ns))},
	}}
	create(t,
		&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "class"}, Spec: v1alpha2.NginxProxySpec{
			AllowGatewayOverrides: &v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideImages}},
		}},
		class,
	)
	t.Cleanup(func() { _ = rt.Client.Delete(context.Background(), class) })
	create(t, &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default-image"}, Spec: v1alpha2.NginxProxySpec{
		WAF: v1alpha2.WAFEnabled,
		Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Container: &v1alpha2.ContainerSpec{
			Image: &v1alpha2.Image{Repository: ptr.To(repo), Tag: ptr.To(tag)}}}},
	}})
	create(t,
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(ns),
			Infrastructure:   &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "default-image"}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		httpRoute(ns, "app", "gw", "app.example.com", "/", "echo"),
		&v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "protect"}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base"},
		}},
	)
	v1 := []byte("bundle for an image without App Protect\n")
	srv.Put(nil, "plm", "no-module.tgz", v1)
	compile(t, types.NamespacedName{Namespace: ns, Name: "base"}, "no-module.tgz", v1)
	eventually(t, 120*time.Second, func() error {
		m := gatewayProgrammedMessage(t, types.NamespacedName{Namespace: ns, Name: "gw"})
		if !strings.HasPrefix(m, "False/") || !strings.Contains(m, "dlopen()") || !strings.Contains(m, "the data-plane image has no App Protect module") ||
			!strings.Contains(m, "build/dataplane-waf/Dockerfile") {
			return fmt.Errorf("Gateway Programmed: %q", m)
		}
		return nil
	})
}
