package e2e

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/s3test"
	"github.com/gatewall/gatewall/test/testenv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
)

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p)
	return s[i]
}

// TestRouteLatency creates 50 HTTPRoutes one after another and measures, for
// each, the time from creation to its first 200 through NGINX, split into
// the control plane's share (creation to the push) and the data plane's
// (push to served: the agent fetching files, nginx -t and the reload).
func TestRouteLatency(t *testing.T) {
	rec := watchEvents(t, time.Now())
	ns := namespace(t, "e2e-latency")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "echo", 1)...)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	create(t, httpRoute(ns, "warmup", "gw", "warmup.example.com", "/", "echo"))
	addr := programmedAddress(t, gw, 90*time.Second)
	serves(t, addr, "warmup.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)

	const n = 50
	var total, control, data []time.Duration
	for i := 0; i < n; i++ {
		host := fmt.Sprintf("r%d.example.com", i)
		pushesBefore := len(rec.Of(agent.EventPushSent, gw))
		start := time.Now()
		create(t, httpRoute(ns, fmt.Sprintf("r%d", i), "gw", host, "/", "echo"))
		eventually(t, 60*time.Second, func() error {
			code, _, err := get(addr, host, "/")
			if err != nil || code != 200 {
				return fmt.Errorf("route %d: %d %v", i, code, err)
			}
			return nil
		})
		served := time.Now()
		total = append(total, served.Sub(start))
		if pushes := rec.Of(agent.EventPushSent, gw); len(pushes) > pushesBefore {
			push := pushes[pushesBefore].At
			control = append(control, push.Sub(start))
			data = append(data, served.Sub(push))
		}
		// The agent answers a push only after watching NGINX for its
		// reload-monitoring period, and a Gateway has one push in flight at
		// a time: let it settle so each route is measured on its own.
		settled(t, rec, gw)
	}
	var sumData, sumTotal time.Duration
	for i := range data {
		sumData += data[i]
	}
	for _, d := range total {
		sumTotal += d
	}
	t.Logf("HTTPRoute created -> first 200, over %d routes: p50 %s, p99 %s, max %s", n,
		percentile(total, 0.5).Round(time.Millisecond), percentile(total, 0.99).Round(time.Millisecond), percentile(total, 1).Round(time.Millisecond))
	if len(control) > 0 {
		t.Logf("  control plane (created -> pushed): p50 %s, p99 %s; data plane (pushed -> served: fetch, nginx -t, reload): p50 %s, p99 %s; data-plane share %.0f%%",
			percentile(control, 0.5).Round(time.Millisecond), percentile(control, 0.99).Round(time.Millisecond),
			percentile(data, 0.5).Round(time.Millisecond), percentile(data, 0.99).Round(time.Millisecond),
			100*float64(sumData)/float64(sumTotal))
	}

	// A burst: many routes created at once coalesce into few pushes.
	pushesBefore := len(rec.Of(agent.EventPushSent, gw))
	start := time.Now()
	for i := 0; i < n; i++ {
		create(t, httpRoute(ns, fmt.Sprintf("b%d", i), "gw", fmt.Sprintf("b%d.example.com", i), "/", "echo"))
	}
	created := time.Since(start)
	eventually(t, 120*time.Second, func() error {
		for i := 0; i < n; i++ {
			if code, _, err := get(addr, fmt.Sprintf("b%d.example.com", i), "/"); err != nil || code != 200 {
				return fmt.Errorf("burst route %d: %d %v", i, code, err)
			}
		}
		return nil
	})
	t.Logf("burst of %d HTTPRoutes (created in %s): all served %s after the first creation, in %d pushes",
		n, created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), len(rec.Of(agent.EventPushSent, gw))-pushesBefore)
	logMemory(t, fmt.Sprintf("with %d HTTPRoutes on one Gateway", 2*n+1))
}

// logMemory logs the manager's memory: its process's RSS and peak (read on
// the host: the pod's processes are the host's) and its Go heap in use (from
// its metrics endpoint, which the host reaches at the pod's IP).
func logMemory(t *testing.T, when string) {
	t.Helper()
	m := managerMemory(t)
	t.Logf("memory %s: manager pod RSS %d MiB, peak %d MiB; Go heap in use %d MiB", when, m.rss>>20, m.peak>>20, m.heap>>20)
}

// settled waits until every push to gw has its answer.
func settled(t *testing.T, rec *testenv.AgentEvents, gw types.NamespacedName) {
	t.Helper()
	eventually(t, 60*time.Second, func() error {
		sent, answered := len(rec.Of(agent.EventPushSent, gw)), len(rec.Of(agent.EventApplyResult, gw))
		if answered < sent {
			return fmt.Errorf("%d of %d pushes answered", answered, sent)
		}
		return nil
	})
}

// TestWAFUpdateAcrossGateways: 20 WAF-enabled Gateways use one APPolicy;
// a new bundle is fetched once and reaches all of them.
func TestWAFUpdateAcrossGateways(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, plmSecret, nil)
	withPLM(t, srv)
	ns := namespace(t, "e2e-waf-fleet")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	create(t, &appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}})
	ap := types.NamespacedName{Namespace: ns, Name: "shared"}
	v1, v2 := []byte("shared bundle v1\n"), []byte("shared bundle v2\n")
	srv.Put(nil, "plm", "shared-v1.tgz", v1)
	srv.Put(nil, "plm", "shared-v2.tgz", v2)
	compile(t, ap, "shared-v1.tgz", v1)
	const n = 20
	addrs := make([]string, n)
	// Twenty WAF data planes with the default requests (310m CPU and
	// 800Mi each, docs/budgets.md) do not fit this 2-core node: these ask
	// for little.
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("32Mi")}}
	dense := v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Container: &v1alpha2.ContainerSpec{Resources: small},
		Endpoints: &v1alpha2.EndpointsContainer{Resources: small},
		WAFContainers: &v1alpha2.WAFContainers{
			Enforcer: &v1alpha2.ContainerSpec{Resources: small}, ConfigManager: &v1alpha2.ContainerSpec{Resources: small},
		},
	}}}
	for i := 0; i < n; i++ {
		wafGatewayWith(t, ns, fmt.Sprintf("gw%02d", i), "shared", dense)
	}
	for i := 0; i < n; i++ {
		addrs[i] = programmedAddress(t, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("gw%02d", i)}, 180*time.Second)
	}
	protectedAll := func(bundle []byte) func() error {
		return func() error {
			for i, a := range addrs {
				if p, err := protectedBy(a, "app.example.com"); err != nil || p != policy.BundlePath(sha(bundle)) {
					return fmt.Errorf("gateway %d: blocked by %q (%v)", i, p, err)
				}
			}
			return nil
		}
	}
	eventually(t, 120*time.Second, protectedAll(v1))

	start := time.Now()
	compile(t, ap, "shared-v2.tgz", v2)
	var mu sync.Mutex
	applied := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range addrs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			eventually(t, 120*time.Second, func() error {
				if p, err := protectedBy(addrs[i], "app.example.com"); err != nil || p != policy.BundlePath(sha(v2)) {
					return fmt.Errorf("gateway %d: blocked by %q (%v)", i, p, err)
				}
				return nil
			})
			mu.Lock()
			applied[i] = time.Since(start)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	t.Logf("APPolicy status change -> new bundle enforced on all %d Gateways: %s (first %s, median %s)",
		n, percentile(applied, 1).Round(time.Millisecond), percentile(applied, 0).Round(time.Millisecond), percentile(applied, 0.5).Round(time.Millisecond))
	for _, key := range []string{"shared-v1.tgz", "shared-v2.tgz"} {
		if got := srv.GetObjectRequests(key); got != 1 {
			t.Errorf("%s was fetched %d times for %d Gateways, want 1", key, got, n)
		}
	}
}
