package scale

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// big is the big Gateway's scene, shared by the phases of TestScale.
type big struct {
	ns     string
	gw     types.NamespacedName
	addr   string
	pod    corev1.Pod
	master int // its NGINX master process on this host
}

// TestScale runs the phases in order on one big Gateway, then the fan-out
// phases, and writes the summary table.
func TestScale(t *testing.T) {
	routes, certs := *routesFlag, *certsFlag
	if certs < 2 || certs > routes || *unchangedFlag > routes || *unchangedFlag < 1 {
		t.Fatalf("-scale.certs %d and -scale.unchanged %d must be between 2 (1) and -scale.routes %d", certs, *unchangedFlag, routes)
	}
	if *policiesFlag < 0 || *policiesFlag > routes+1 {
		t.Fatalf("-scale.policies %d must be between 0 and -scale.routes + 1 (%d)", *policiesFlag, routes+1)
	}
	ns := rt.Namespace(t, "scale")
	rt.GatewayClass(t)
	rt.Create(t, testenv.Echo(ns, "echo", 2)...)
	rt.Create(t, testenv.Echo(ns, "echo2", 1)...)
	b := &big{ns: ns, gw: types.NamespacedName{Namespace: ns, Name: "gw"}}
	if !t.Run("serve all", b.serveAll) {
		return
	}
	t.Run("memory", func(t *testing.T) { b.memory(t, "") })
	t.Run("propagation", b.propagation)
	t.Run("policy status", b.policyStatus)
	t.Run("churn", b.churn)
	t.Run("memory after churn", func(t *testing.T) { b.memory(t, " after churn") })
	t.Run("pod churn", b.podChurn)
	t.Run("fan-out to pods", func(t *testing.T) { fanOutPods(t, ns, *fanoutFlag) })
	t.Run("fan-out to Gateways", func(t *testing.T) { fanOutGateways(t, ns, *fanoutFlag) })

	table := fmt.Sprintf("%d routes, %d certificates, %d ClientSettingsPolicies, churn %s on %d unchanged routes, pod churn %s with %d pods, fan-out %d\n\n%s",
		routes, certs, *policiesFlag, *churnFlag, *unchangedFlag, *podChurnFlag, *podsFlag, *fanoutFlag, report.markdown())
	t.Log("summary:\n" + table)
	if *reportFlag != "" {
		if err := os.WriteFile(*reportFlag, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// serveAll creates the certificates, the Gateway, its ListenerSet and the
// routes at once, and waits until every route serves; every HTTPS listener
// must present its own certificate.
func (b *big) serveAll(t *testing.T) {
	routes, certs := *routesFlag, *certsFlag
	var objs []client.Object
	for k := 0; k < certs; k++ {
		objs = append(objs, certSecret(t, b.ns, certName(k), routeHost(k)))
	}
	gw, ls := bigGateway(b.ns, certs)
	objs = append(objs, gw, ls)
	for i := 0; i < routes; i++ {
		objs = append(objs, route(b.ns, i, certs, "echo"))
	}
	objs = append(objs, policies(b.ns, *policiesFlag)...)
	start := time.Now()
	createAll(t, objs)
	created := time.Since(start)
	b.addr = rt.ProgrammedAddress(t, b.gw, 10*time.Minute)
	for i := 0; i < routes; i++ {
		if _, err := reaches(b.addr, routeHost(i), servedByEcho, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	all := time.Since(start)
	b.statusesWritten(t, routes)
	statuses := time.Since(start)
	for k := 0; k < certs; k++ {
		b.presents(t, k)
	}
	// One pod: a second would be a rollout, which the Secrets arriving
	// after the Gateway caused before the pod template stopped following
	// the listeners.
	pods, err := rt.RunningPods(context.Background(), b.ns, map[string]string{provisioner.GatewayNameLabel: "gw"})
	if err != nil || len(pods) != 1 {
		t.Fatalf("data-plane pods of %s: %d (%v), want 1 (a second one is a rollout)", b.gw, len(pods), err)
	}
	b.pod = pods[0]
	b.master = testenv.WaitProcess(t, b.pod, "nginx: master")
	size := configSize(t, b.master)
	check, reload := nginxTest(t, b.master), nginxReload(t, b.master)
	t.Logf("%d objects created in %s; every route served %s after the first create; configuration %d bytes; nginx -t %s, reload %s",
		len(objs), created.Round(time.Millisecond), all.Round(time.Millisecond), size, check, reload)
	report.add("all routes served after applying everything", fmt.Sprintf("%.1f s (objects created in %.1f s; configuration %.1f MB; `nginx -t` %s, reload %s)",
		all.Seconds(), created.Seconds(), float64(size)/1e6, ms(check), ms(reload)), "")
	report.add("every route's status written (Accepted) after applying everything", fmt.Sprintf("%.1f s", statuses.Seconds()), "")
}

// statusesWritten waits until every route of the big Gateway has its
// Accepted parent status from Gatewall (written in the background, under
// the manager's client rate limit), so that the phases after it do not
// share the machine with thousands of status writes.
func (b *big) statusesWritten(t *testing.T, routes int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		// A list of thousands of routes is heavy: ask every 2 s.
		list := &gatewayv1.HTTPRouteList{}
		if err := rt.Client.List(context.Background(), list, client.InNamespace(b.ns)); err != nil {
			t.Fatal(err)
		}
		accepted := 0
		for _, r := range list.Items {
			for _, p := range r.Status.Parents {
				if string(p.ParentRef.Name) == "gw" && meta.IsStatusConditionTrue(p.Conditions, "Accepted") {
					accepted++
					break
				}
			}
		}
		if accepted >= routes {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10m %d of %d routes have their Accepted status", accepted, routes)
		}
		time.Sleep(2 * time.Second)
	}
}

// presents checks that HTTPS listener k presents certificate k and routes.
func (b *big) presents(t *testing.T, k int) {
	t.Helper()
	host := routeHost(k)
	testenv.Eventually(t, 2*time.Minute, func() error {
		c, err := tls.Dial("tcp", b.addr+":443", &tls.Config{ServerName: host, InsecureSkipVerify: true}) //nolint:gosec // the certificate's name is checked below
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		if names := c.ConnectionState().PeerCertificates[0].DNSNames; len(names) != 1 || names[0] != host {
			return fmt.Errorf("HTTPS listener %d presents a certificate for %v, want %s", k, names, host)
		}
		return nil
	})
}

// configSize is the bytes of configuration under the pod's /etc/nginx.
func configSize(t *testing.T, master int) int64 {
	t.Helper()
	var n int64
	root := filepath.Join("/proc", strconv.Itoa(master), "root", "etc", "nginx")
	err := filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// memory records the manager's RSS and Go heap, and the agent's and NGINX's
// RSS in the big Gateway's pod.
func (b *big) memory(t *testing.T, when string) {
	pod, pid := managerPod(t)
	m := metrics(t, pod, "go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes")
	agent := testenv.WaitProcess(t, b.pod, "/usr/bin/nginx-agent")
	nginx := rss(t, b.master)
	for _, w := range testenv.Children(b.master) {
		if r, err := testenv.RSS(w); err == nil {
			nginx += r
		}
	}
	t.Logf("manager RSS %s, Go heap in use %s (allocated %s); agent RSS %s; NGINX RSS %s",
		mib(rss(t, pid)), mib(int64(m["go_memstats_heap_inuse_bytes"])), mib(int64(m["go_memstats_heap_alloc_bytes"])), mib(rss(t, agent)), mib(nginx))
	report.add("manager RSS, Go heap in use"+when, fmt.Sprintf("%s, %s", mib(rss(t, pid)), mib(int64(m["go_memstats_heap_inuse_bytes"]))), "RSS <= 150 MiB")
	report.add("agent RSS, NGINX RSS (master and workers)"+when, fmt.Sprintf("%s, %s", mib(rss(t, agent)), mib(nginx)), "")
}
