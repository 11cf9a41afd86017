package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/local/netns"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestScaleUnderLoad: a Gateway's data plane goes from 1 replica to 3 and
// back to 1 (its NginxProxy's replicas) while clients send without a
// pause: through the load balancer, keep-alive clients sending POSTs (which
// an HTTP client does not resend when a connection closes under them; each
// opens a new connection every 20 requests, so that connections reach the
// new pods and the pods scaled in) and clients opening a connection per
// GET; and, from the node, clients opening a connection per GET to the
// Service's cluster IP, through kube-proxy, which (unlike the local load
// balancer) does not try another endpoint when one refuses. With the
// data plane's drain (provisioner/drain.go) every request is answered 200:
// the pods scaled out take traffic only once ready, the pods scaled in
// leave the load balancer and kube-proxy's rules before NGINX stops taking
// connections, and finish those they have.
//
// The same steps run first without the drain, for comparison (their
// failures are logged, not asserted): a termination grace of 0 leaves no
// pause, and NGINX is told to stop as its pods are deleted, as every pod
// was before the drain.
func TestScaleUnderLoad(t *testing.T) {
	gatewayClass(t)
	t.Run("without the drain", func(t *testing.T) {
		total, failed := scaleUnderLoad(t, "e2e-scale-nodrain", ptr.To(int64(0)))
		t.Logf("without the drain: %d of %d requests failed", failed, total)
	})
	t.Run("with the drain", func(t *testing.T) {
		total, failed := scaleUnderLoad(t, "e2e-scale-drain", nil)
		if failed > 0 {
			t.Errorf("%d of %d requests failed while the data plane scaled", failed, total)
		}
	})
}

// scaleUnderLoad runs the steps of TestScaleUnderLoad on a Gateway of its
// own whose pods' termination grace is grace (nil: Gatewall's default)
// and returns how many requests were sent and how many failed.
func scaleUnderLoad(t *testing.T, ns string, grace *int64) (total, failed int) {
	ctx := context.Background()
	ns = namespace(t, ns)
	dep := &v1alpha2.DeploymentSpec{Replicas: ptr.To(int32(1))}
	if grace != nil {
		dep.Pod = &v1alpha2.PodSpec{TerminationGracePeriodSeconds: grace}
	}
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{Deployment: dep},
	}}
	create(t, np, gatewayWithProxy(ns, "gw", "gw"))
	create(t, echo(ns, "echo", 2)...)
	create(t, httpRoute(ns, "load", "gw", "load.example.com", "/", "echo"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	serves(t, addr, "load.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)

	// The cluster IP is reached from the node's network namespace, where
	// kube-proxy's rules are. Without it the load balancer's clients still
	// run, and the test fails.
	clusterIP := serviceClusterIP(t, ns)
	fromNode := nodeClient()
	if err := answersWithin(fromNode, clusterIP, "load.example.com", 30*time.Second); err != nil {
		t.Errorf("the Service's cluster IP %s from the node: %v", clusterIP, err)
		clusterIP = ""
	}
	load := startLoad(addr, clusterIP, "load.example.com")
	defer load.stop()
	scale := func(n int32) time.Duration {
		t.Helper()
		start := time.Now()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p := &v1alpha2.NginxProxy{}
			if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(np), p); err != nil {
				return err
			}
			p.Spec.Kubernetes.Deployment.Replicas = ptr.To(n)
			return rt.Client.Update(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, int(n)) })
		return time.Since(start)
	}

	load.phase("1 pod")
	time.Sleep(5 * time.Second)
	load.phase("scaling out to 3")
	out := scale(3)
	load.phase("3 pods")
	time.Sleep(10 * time.Second)
	served := servingPods(t, ns)
	load.phase("scaling in to 1")
	in := scale(1)
	load.phase("1 pod again")
	time.Sleep(5 * time.Second)
	load.stop()

	t.Logf("scale out to 3 ready pods: %s; scale in to 1 pod (the others gone): %s; pods that logged load requests at 3: %d",
		out.Round(100*time.Millisecond), in.Round(100*time.Millisecond), served)
	total, failed = load.report(t)
	if served < 3 {
		t.Errorf("%d of the 3 data-plane pods served the load: the test did not reach the pods it scaled", served)
	}
	if total < 100 {
		t.Errorf("only %d requests sent", total)
	}
	return total, failed
}

// nodeClient is an HTTP client whose connections (one per request) are
// made in the node's network namespace.
func nodeClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := netns.Do(rt.Node.NetNS(), func() (err error) {
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// answersWithin waits until GET host/ through addr with c is answered 200
// by an echo pod.
func answersWithin(c *http.Client, addr, host string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := answer(c, http.MethodGet, addr, host, "/")
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dataPlanePods is nil once the Gateway's data plane has n pods, all
// ready, and no other (terminating ones included).
func dataPlanePods(ctx context.Context, ns string, n int) error {
	pods, err := listGatewayPods(ctx, ns)
	if err != nil {
		return err
	}
	ready := 0
	for _, p := range pods {
		if testenv.Ready(p) && p.DeletionTimestamp == nil {
			ready++
		}
	}
	d := &appsv1.Deployment{}
	if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-nginx"}, d); err != nil {
		return err
	}
	if len(pods) != n || ready != n {
		return fmt.Errorf("%d pods, %d ready; want %d (Deployment status %+v)", len(pods), ready, n, d.Status)
	}
	return nil
}

// servingPods counts the data-plane pods whose access log has a load
// request.
func servingPods(t *testing.T, ns string) int {
	t.Helper()
	n := 0
	for _, p := range gatewayPods(t, ns) {
		lines, err := rt.PodLog(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if strings.Contains(l, "/load?") {
				n++
				break
			}
		}
	}
	return n
}

// load is the clients of TestScaleUnderLoad; counts are kept per client
// kind and phase.
type load struct {
	host string
	cur  atomic.Pointer[string]
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	mu     sync.Mutex
	counts map[[2]string]*[2]int // kind, phase → ok, failed
	phases []string
	errs   []string
}

const (
	keepAliveClients     = 2
	newConnectionClients = 2
	clusterIPClients     = 2
)

// The client kinds, in the order of the report.
const (
	kindKeepAlive = "LB keep-alive POST"
	kindNewConn   = "LB new-conn GET"
	kindClusterIP = "kube-proxy GET"
)

// startLoad sends to the load balancer's address lb and, from the node,
// to the Service's cluster IP (none when "").
func startLoad(lb, clusterIP, host string) *load {
	l := &load{host: host, quit: make(chan struct{}), counts: map[[2]string]*[2]int{}}
	l.phase("starting")
	for i := range keepAliveClients {
		tr := &http.Transport{MaxIdleConnsPerHost: 1}
		l.run(fmt.Sprintf("keep-alive %d", i), kindKeepAlive, http.MethodPost, lb, &http.Client{Timeout: 10 * time.Second, Transport: tr}, tr.CloseIdleConnections)
	}
	for i := range newConnectionClients {
		tr := &http.Transport{DisableKeepAlives: true}
		l.run(fmt.Sprintf("new-conn %d", i), kindNewConn, http.MethodGet, lb, &http.Client{Timeout: 10 * time.Second, Transport: tr}, func() {})
	}
	for i := range clusterIPClients {
		if clusterIP == "" {
			break
		}
		l.run(fmt.Sprintf("cluster-ip %d", i), kindClusterIP, http.MethodGet, clusterIP, nodeClient(), func() {})
	}
	return l
}

// serviceClusterIP is the cluster IP of the Gateway gw's data-plane
// Service.
func serviceClusterIP(t *testing.T, ns string) string {
	t.Helper()
	list := &corev1.ServiceList{}
	if err := rt.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{provisioner.GatewayNameLabel: "gw"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Spec.ClusterIP == "" {
		t.Fatalf("%d data-plane Services; want one with a cluster IP", len(list.Items))
	}
	return list.Items[0].Spec.ClusterIP
}

func (l *load) phase(name string) {
	l.mu.Lock()
	l.phases = append(l.phases, name)
	l.mu.Unlock()
	l.cur.Store(&name)
}

func (l *load) run(id, kind, method, addr string, c *http.Client, reconnect func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-l.quit:
				return
			default:
			}
			if i%20 == 0 {
				reconnect()
			}
			phase := *l.cur.Load()
			err := answer(c, method, addr, l.host, fmt.Sprintf("/load?c=%s&i=%d", strings.ReplaceAll(id, " ", "-"), i))
			l.mu.Lock()
			n := l.counts[[2]string{kind, phase}]
			if n == nil {
				n = &[2]int{}
				l.counts[[2]string{kind, phase}] = n
			}
			if err == nil {
				n[0]++
			} else {
				n[1]++
				if len(l.errs) < 20 {
					l.errs = append(l.errs, fmt.Sprintf("%s %s, %s: %v", time.Now().Format("15:04:05.000"), id, phase, err))
				}
			}
			l.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

// answer sends one request (a POST has a small body) and is nil when an
// echo pod answered it 200.
func answer(c *http.Client, method, addr, host, path string) error {
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("a small body")
	}
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		return err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"pod": "echo-`) {
		return fmt.Errorf("%d %s", resp.StatusCode, trunc(string(b)))
	}
	return nil
}

func (l *load) stop() {
	l.once.Do(func() { close(l.quit) })
	l.wg.Wait()
}

// report logs the counts per kind and phase and the first errors, and
// returns the totals.
func (l *load) report(t *testing.T) (total, failed int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, kind := range []string{kindKeepAlive, kindNewConn, kindClusterIP} {
		for _, phase := range l.phases {
			if n := l.counts[[2]string{kind, phase}]; n != nil {
				fmt.Fprintf(&b, "\n  %-20s %-18s %6d requests, %d failed", kind, phase, n[0]+n[1], n[1])
				total += n[0] + n[1]
				failed += n[1]
			}
		}
	}
	t.Logf("requests by client kind and phase:%s\n  total %d, failed %d", b.String(), total, failed)
	if len(l.errs) > 0 {
		t.Logf("first failures:\n  %s", strings.Join(l.errs, "\n  "))
	}
	return total, failed
}
