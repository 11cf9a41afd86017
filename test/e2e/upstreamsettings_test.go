package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/local/images"
)

func upstreamSettings(ns, name string, services []string, spec v1alpha1.UpstreamSettingsPolicySpec) *v1alpha1.UpstreamSettingsPolicy {
	spec.TargetRefs = nil
	for _, s := range services {
		spec.TargetRefs = append(spec.TargetRefs, gatewayv1.LocalPolicyTargetReference{Group: "", Kind: "Service", Name: gatewayv1.ObjectName(s)})
	}
	return &v1alpha1.UpstreamSettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// connBackend is testbackend with replicas pods that know their names, so
// that /conn says which pod answered.
func connBackend(ns, name string, replicas int32) []client.Object {
	c := corev1.Container{
		Name: "backend", Image: images.TestBackend, Args: []string{"-listen", ":8080"}, Env: podIdentityEnv(),
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	return app(ns, name, replicas, c, nil, corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)})
}

// connReport is testbackend's answer to /conn: the pod, which of its
// connections from NGINX carried the request, and how many requests that
// connection has carried, this one included.
type connReport struct {
	Pod      string
	Conn     int
	Requests int
}

func (c connReport) String() string {
	return fmt.Sprintf("{%s conn=%d requests=%d}", c.Pod, c.Conn, c.Requests)
}

// connReports sends GET of each path in turn on one client connection to
// NGINX and returns the /conn answers. One client connection is handled by
// one NGINX worker process, and each worker has its own cache of upstream
// keep-alive connections, so the answers show what that one cache does. It
// fails if NGINX closes the connection (a reload would) or does not answer
// 200.
func connReports(addr, host string, paths []string) ([]connReport, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "80"), 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	var out []connReport
	for i, path := range paths {
		if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host); err != nil {
			return out, err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return out, fmt.Errorf("GET %s%s, request %d on the connection: %w", host, path, i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return out, err
		}
		var c connReport
		if resp.StatusCode != http.StatusOK {
			return out, fmt.Errorf("GET %s%s: %d %q, want 200", host, path, resp.StatusCode, trunc(string(body)))
		}
		if _, err := fmt.Sscanf(string(body), "conn=%d requests=%d pod=%s", &c.Conn, &c.Requests, &c.Pod); err != nil {
			return out, fmt.Errorf("GET %s%s: body %q is no /conn answer: %v", host, path, trunc(string(body)), err)
		}
		out = append(out, c)
		if resp.Close && i < len(paths)-1 {
			return out, fmt.Errorf("GET %s%s: NGINX closed the client connection after %d requests", host, path, i+1)
		}
	}
	return out, nil
}

func repeat(path string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = path
	}
	return out
}

// pods returns the distinct pods of the answers.
func pods(rs []connReport) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		out[r.Pod] = true
	}
	return out
}

// TestUpstreamSettings: by default NGINX reuses its connections to a
// Service's endpoints; an UpstreamSettingsPolicy's keepAlive.connections 0
// makes every request open a new one, keepAlive.requests 2 closes each after
// two requests, loadBalancingMethod hash on $arg_user sends a user to one pod
// and spreads users over both, and useClusterIP proxies to the Service's
// cluster IP through kube-proxy. Each case has its own Service (two pods)
// and route, and each policy targets only its case's Service.
func TestUpstreamSettings(t *testing.T) {
	ns := namespace(t, "e2e-upstreamsettings")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	services := []string{"plain", "no-keepalive", "two-requests", "hash", "cluster-ip"}
	for _, s := range services {
		create(t, connBackend(ns, s, 2)...)
		create(t, httpRoute(ns, s, "gw", s+".example.com", "/", s))
	}
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)
	// Both pods of every Service serve: round robin, NGINX's default,
	// alternates between them.
	for _, s := range services {
		eventually(t, 90*time.Second, func() error {
			got, err := connReports(addr, s+".example.com", repeat("/conn", 4))
			if err != nil {
				return err
			}
			if len(pods(got)) != 2 {
				return errf("%s: answers %v, want both pods", s, got)
			}
			return nil
		})
	}

	t.Run("by default NGINX reuses upstream connections", func(t *testing.T) {
		var got []connReport
		eventually(t, 30*time.Second, func() error {
			var err error
			if got, err = connReports(addr, "plain.example.com", repeat("/conn", 6)); err != nil {
				return err
			}
			for _, r := range got {
				if r.Requests >= 2 {
					return nil
				}
			}
			return errf("answers %v: no upstream connection carried two requests, want keep-alive connections (keepalive 16)", got)
		})
	})

	t.Run("keepAlive.connections 0: a new upstream connection for every request", func(t *testing.T) {
		create(t, upstreamSettings(ns, "no-keepalive", []string{"no-keepalive"}, v1alpha1.UpstreamSettingsPolicySpec{
			KeepAlive: &v1alpha1.UpstreamKeepAlive{Connections: ptr.To(int32(0))}}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.UpstreamSettingsPolicy{}, ns, "no-keepalive") })
		got, err := connReports(addr, "no-keepalive.example.com", repeat("/conn", 6))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range got {
			key := fmt.Sprintf("%s/%d", r.Pod, r.Conn)
			if r.Requests != 1 || seen[key] {
				t.Fatalf("answers %v: an upstream connection carried more than one request, want a new connection for each (no keepalive)", got)
			}
			seen[key] = true
		}
		// The policy targets only its Service: the others keep keepalive 16.
		if got, err := connReports(addr, "plain.example.com", repeat("/conn", 6)); err != nil || most(got) < 2 {
			t.Fatalf("another Service: answers %v, %v: want its upstream connections still reused", got, err)
		}
	})

	t.Run("keepAlive.requests 2: an upstream connection carries at most two requests", func(t *testing.T) {
		// Without the policy (NGINX's default, 1000), each pod's connection
		// carries its 4 of the 8 requests.
		got, err := connReports(addr, "two-requests.example.com", repeat("/conn", 8))
		if err != nil {
			t.Fatal(err)
		}
		if most(got) <= 2 {
			t.Fatalf("without a policy: answers %v, want an upstream connection carrying more than 2 requests", got)
		}
		create(t, upstreamSettings(ns, "two-requests", []string{"two-requests"}, v1alpha1.UpstreamSettingsPolicySpec{
			KeepAlive: &v1alpha1.UpstreamKeepAlive{Requests: ptr.To(int32(2))}}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.UpstreamSettingsPolicy{}, ns, "two-requests") })
		if got, err = connReports(addr, "two-requests.example.com", repeat("/conn", 8)); err != nil {
			t.Fatal(err)
		}
		if most(got) != 2 {
			t.Fatalf("under keepAlive.requests 2: answers %v, want upstream connections reused for exactly 2 requests each", got)
		}
	})

	t.Run("loadBalancingMethod hash on $arg_user: one pod per user, users over both pods", func(t *testing.T) {
		create(t, upstreamSettings(ns, "hash", []string{"hash"}, v1alpha1.UpstreamSettingsPolicySpec{
			LoadBalancingMethod: ptr.To(v1alpha1.LoadBalancingType("hash")),
			HashMethodKey:       ptr.To(v1alpha1.HashMethodKey("$arg_user")),
		}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.UpstreamSettingsPolicy{}, ns, "hash") })
		got, err := connReports(addr, "hash.example.com", repeat("/conn?user=alice", 10))
		if err != nil {
			t.Fatal(err)
		}
		if len(pods(got)) != 1 {
			t.Fatalf("user alice: answers %v, want every request on one pod (round robin would alternate)", got)
		}
		// NGINX's hash method picks a peer from the CRC32 of the key; these
		// 20 names fall 10 and 10 on two peers.
		var users []string
		for i := 1; i <= 20; i++ {
			users = append(users, fmt.Sprintf("/conn?user=user%02d", i))
		}
		if got, err = connReports(addr, "hash.example.com", users); err != nil {
			t.Fatal(err)
		}
		if len(pods(got)) != 2 {
			t.Fatalf("20 users: answers %v, want both pods", got)
		}
	})

	t.Run("useClusterIP: NGINX proxies to the Service's cluster IP", func(t *testing.T) {
		create(t, upstreamSettings(ns, "cluster-ip", []string{"cluster-ip"}, v1alpha1.UpstreamSettingsPolicySpec{UseClusterIP: ptr.To(true)}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.UpstreamSettingsPolicy{}, ns, "cluster-ip") })
		// The upstream's one server is the cluster IP: NGINX keeps one
		// connection to it, which kube-proxy took to one pod, instead of
		// alternating between the two pods' addresses. The first answers
		// after Programmed may still come from the connections the
		// previous configuration's upstream kept (NGINX's reload lets old
		// workers finish), so the runs are tried until one holds.
		eventually(t, 30*time.Second, func() error {
			got, err := connReports(addr, "cluster-ip.example.com", repeat("/conn", 6))
			if err != nil {
				return errf("through the cluster IP: %v", err)
			}
			for _, r := range got {
				if r.Pod != got[0].Pod || r.Conn != got[0].Conn {
					return errf("answers %v, want one kept-alive connection to the cluster IP carrying every request, not round robin over the pods", got)
				}
			}
			return nil
		})
	})
}

// most is the largest number of requests an answer's connection had carried.
func most(rs []connReport) int {
	n := 0
	for _, r := range rs {
		n = max(n, r.Requests)
	}
	return n
}
