package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/tcp"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/local/images"
)

// TestTCPAndUDPBesideHTTP: one Gateway serves HTTP on port 80, a TCP echo
// on port 5000 and a UDP echo on port 5000 too (one port number, two
// transports), each route weighted evenly across two backends. Every
// connection and every request/response datagram exchange (a new client
// socket each, as DNS clients do) is answered, both backends of each get a
// share, HTTP keeps working beside them, and a weight change moves all new
// connections to one backend.
func TestTCPAndUDPBesideHTTP(t *testing.T) {
	ns := namespace(t, "e2e-l4")
	gatewayClass(t)
	for _, name := range []string{"tcp-a", "tcp-b"} {
		create(t, l4Echo(ns, name, corev1.ProtocolTCP)...)
	}
	for _, name := range []string{"udp-a", "udp-b"} {
		create(t, l4Echo(ns, name, corev1.ProtocolUDP)...)
	}
	create(t, echo(ns, "web", 1)...)
	gw := gateway(ns, "gw")
	// Each UDP exchange below comes from a new socket: a session each,
	// lingering l4.udpSessionTimeout (10s) after its answer, so the
	// listener holds about 200 at once, more than the default 64
	// (docs/tcp-udp.md).
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "l4"}}
	create(t, &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "l4"},
		Spec: v1alpha2.NginxProxySpec{WorkerConnections: ptr.To[int32](2048), L4: &v1alpha2.L4Listeners{MaxConnections: ptr.To[int32](256)}}})
	gw.Spec.Listeners = append(gw.Spec.Listeners,
		gatewayv1.Listener{Name: "tcp", Port: 5000, Protocol: gatewayv1.TCPProtocolType},
		gatewayv1.Listener{Name: "udp", Port: 5000, Protocol: gatewayv1.UDPProtocolType})
	tcpRoute := &gatewayv1.TCPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tcp"},
		Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("tcp"))}}},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: weighted("tcp-a", 1, "tcp-b", 1)}},
		},
	}
	udpRoute := &gatewayv1.UDPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "udp"},
		Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("udp"))}}},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: weighted("udp-a", 1, "udp-b", 1)}},
		},
	}
	create(t, gw, tcpRoute, udpRoute, httpRoute(ns, "web", "gw", "web.example.com", "/", "web"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	tcpAddr, udpAddr := net.JoinHostPort(addr, "5000"), net.JoinHostPort(addr, "5000")

	serves(t, addr, "web.example.com", "/", 200, "", 60*time.Second)
	eventually(t, 90*time.Second, func() error {
		_, err := tcp.EchoSendOnce(context.Background(), tcpAddr, 2*time.Second)
		return err
	})
	eventually(t, 90*time.Second, func() error { _, err := udpEcho(udpAddr, "hello"); return err })

	const n = 200
	t.Run("TCP connections are answered and shared by weight", func(t *testing.T) {
		counts := map[string]int{}
		for i := range n {
			pod, err := tcp.EchoSendOnce(context.Background(), tcpAddr, 5*time.Second)
			if err != nil {
				t.Fatalf("connection %d of %d: %v", i+1, n, err)
			}
			counts[backendOf(pod)]++
		}
		checkShares(t, counts, "tcp-a", "tcp-b", n)
	})
	t.Run("UDP exchanges are answered and shared by weight", func(t *testing.T) {
		counts := map[string]int{}
		for i := range n {
			msg := fmt.Sprintf("query-%d", i)
			resp, err := udpEcho(udpAddr, msg)
			if err != nil {
				t.Fatalf("exchange %d of %d: %v", i+1, n, err)
			}
			if resp.Request != msg {
				t.Fatalf("exchange %d: the answer echoes %q, not %q", i+1, resp.Request, msg)
			}
			counts[backendOf(resp.Pod)]++
		}
		checkShares(t, counts, "udp-a", "udp-b", n)
	})
	t.Run("HTTP is served beside them", func(t *testing.T) {
		serves(t, addr, "web.example.com", "/", 200, "", 10*time.Second)
	})
	t.Run("a weight change moves new connections", func(t *testing.T) {
		route := &gatewayv1.TCPRoute{}
		if err := rt.Client.Get(context.Background(), client.ObjectKeyFromObject(tcpRoute), route); err != nil {
			t.Fatal(err)
		}
		route.Spec.Rules[0].BackendRefs = weighted("tcp-a", 1, "tcp-b", 0)
		if err := rt.Client.Update(context.Background(), route); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, func() error {
			for range 20 {
				pod, err := tcp.EchoSendOnce(context.Background(), tcpAddr, 5*time.Second)
				if err != nil {
					return err
				}
				if backendOf(pod) != "tcp-a" {
					return fmt.Errorf("a connection reached %s", pod)
				}
			}
			return nil
		})
		for i := range 50 { // and none fails once it took effect
			if pod, err := tcp.EchoSendOnce(context.Background(), tcpAddr, 5*time.Second); err != nil || backendOf(pod) != "tcp-a" {
				t.Fatalf("connection %d after the change: %q, %v", i+1, pod, err)
			}
		}
	})
	t.Run("a rollout of the serving backend under load", func(t *testing.T) {
		// Two clients open connections back to back while every tcp-a pod
		// is replaced; the endpoints change with a reload (the stream
		// context), and a connection to a pod that is gone goes on to
		// another endpoint.
		stop := make(chan struct{})
		type result struct {
			ok, failed int
			err        error // the first
		}
		results := make(chan result, 2)
		for range 2 {
			go func() {
				var r result
				for {
					select {
					case <-stop:
						results <- r
						return
					default:
					}
					if _, err := tcp.EchoSendOnce(context.Background(), tcpAddr, 5*time.Second); err != nil {
						r.failed++
						if r.err == nil {
							r.err = err
						}
					} else {
						r.ok++
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
		}
		churner{t: t, ns: ns, name: "tcp-a"}.rollout()
		time.Sleep(3 * time.Second) // the old pods' endpoints leave NGINX
		close(stop)
		var total result
		var firstErr error
		for range 2 {
			r := <-results
			total.ok += r.ok
			total.failed += r.failed
			if firstErr == nil {
				firstErr = r.err
			}
		}
		t.Logf("during the rollout: %d connections answered, %d failed (first error: %v)", total.ok, total.failed, firstErr)
		if total.ok == 0 || total.failed > 0 {
			t.Errorf("%d of %d connections failed during the rollout: %v", total.failed, total.ok+total.failed, firstErr)
		}
	})
}

// l4Echo is echo-basic as a TCP echo (port 3000) or a UDP echo (port
// 8080), two replicas, behind a Service port 7000 of that protocol.
func l4Echo(ns, name string, proto corev1.Protocol) []client.Object {
	env := append(podIdentityEnv(), corev1.EnvVar{Name: "SERVICE_NAME", Value: name})
	target := int32(3000)
	if proto == corev1.ProtocolUDP {
		target = 8080
		env = append(env, corev1.EnvVar{Name: "UDP_ECHO_SERVER", Value: "1"}, corev1.EnvVar{Name: "UDP_PORT", Value: "8080"})
	} else {
		env = append(env, corev1.EnvVar{Name: "TCP_ECHO_SERVER", Value: "1"})
	}
	// As a backend should be run behind any proxy: it keeps serving a
	// moment after it is told to stop, while its endpoint leaves NGINX (a
	// TCP connection NGINX opened to it cannot go elsewhere once the
	// backend accepted it).
	c := corev1.Container{Name: "echo", Image: images.Echo, Env: env,
		Ports:     []corev1.ContainerPort{{ContainerPort: target, Protocol: proto}},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3}}}}
	return app(ns, name, 2, c, nil, corev1.ServicePort{Name: "echo", Port: 7000, Protocol: proto, TargetPort: intstr.FromInt32(target)})
}

// weighted are two backendRefs to port 7000 of Services a and b.
func weighted(a string, wa int32, b string, wb int32) []gatewayv1.BackendRef {
	ref := func(name string, w int32) gatewayv1.BackendRef {
		return gatewayv1.BackendRef{Weight: ptr.To(w), BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(7000))}}
	}
	return []gatewayv1.BackendRef{ref(a, wa), ref(b, wb)}
}

// udpAnswer is what echo-basic's UDP echo answers.
type udpAnswer struct {
	Request string `json:"request"`
	Pod     string `json:"pod"`
}

// udpEcho sends one datagram from a new socket and reads the answer.
func udpEcho(addr, msg string) (udpAnswer, error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return udpAnswer{}, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
		return udpAnswer{}, err
	}
	if _, err := conn.Write([]byte(msg)); err != nil {
		return udpAnswer{}, err
	}
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		return udpAnswer{}, err
	}
	var a udpAnswer
	if err := json.Unmarshal(buf[:n], &a); err != nil {
		return udpAnswer{}, fmt.Errorf("answer %q: %w", buf[:n], err)
	}
	return a, nil
}

// backendOf is the Deployment of a pod name (name-<hash>-<suffix>).
func backendOf(pod string) string {
	parts := strings.Split(pod, "-")
	if len(parts) < 3 {
		return pod
	}
	return strings.Join(parts[:len(parts)-2], "-")
}

// checkShares checks that backends a and b each got a fair share of n
// (even weights: at least a quarter each; binomial odds of less are
// below one in a billion at n = 200).
func checkShares(t *testing.T, counts map[string]int, a, b string, n int) {
	t.Helper()
	t.Logf("shares: %v", counts)
	if counts[a]+counts[b] != n || counts[a] < n/4 || counts[b] < n/4 {
		t.Errorf("shares %v of %d: want all to %s and %s, at least %d each", counts, n, a, b, n/4)
	}
}
