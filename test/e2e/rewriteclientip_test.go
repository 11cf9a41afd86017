package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestRewriteClientIP: a Gateway whose class's NginxProxy takes the
// client's address from the PROXY protocol behind the local runtime's load
// balancer (told to send it by the Gateway's infrastructure annotation,
// which the class lets through), or from X-Forwarded-For set by a proxy in
// front of it, trusting only the load balancer's address. Clients connect
// from loopback addresses of their own; the backend (X-Real-IP,
// X-Forwarded-For), the access log and a RateLimitPolicy keyed by
// $binary_remote_addr see each client's address, and a peer the class does
// not trust (the host connecting to the data-plane pod directly, from
// another of its addresses) cannot choose it.
func TestRewriteClientIP(t *testing.T) {
	t.Run("ProxyProtocol", func(t *testing.T) {
		c := startClientAddressGateway(t, "e2e-rewrite-pp", v1alpha2.RewriteClientIPModeProxyProtocol)
		t.Run("the backend and the access log see the client", func(t *testing.T) {
			x := c.send(t, "127.0.0.11", "/who?pp-backend", nil)
			c.assertClient(t, x, "127.0.0.11")
			c.logged(t, "client=127.0.0.11 ", "/who?pp-backend")
		})
		t.Run("rate limits are per client", func(t *testing.T) {
			c.limitsPerClient(t, func(i int) (string, http.Header) { return fmt.Sprintf("127.1.%d.%d", i/250, 1+i%250), nil })
		})
		t.Run("a client's own X-Forwarded-For is not its address", func(t *testing.T) {
			x := c.send(t, "127.0.0.12", "/who?pp-xff", http.Header{"X-Forwarded-For": {"203.0.113.9"}})
			if got := header(x, "X-Real-Ip"); got != "127.0.0.12" {
				t.Errorf("X-Real-IP %q; want the PROXY header's 127.0.0.12", got)
			}
		})
		t.Run("a client's own PROXY header behind the load balancer is refused", func(t *testing.T) {
			// The load balancer's header comes first; the client's is then
			// the first line of its HTTP request.
			status, body := c.raw(t, "127.0.0.13", c.addr+":80",
				"PROXY TCP4 203.0.113.9 127.0.0.1 1234 80\r\nGET /who HTTP/1.1\r\nHost: who.example.com\r\nConnection: close\r\n\r\n")
			if !strings.Contains(status, " 400 ") || strings.Contains(body, "203.0.113.9") {
				t.Errorf("answered %q %q; want 400, and the forged address nowhere", status, trunc(body))
			}
		})
		t.Run("an untrusted peer's PROXY header is ignored", func(t *testing.T) {
			src, pod := c.untrustedPeer(t)
			status, body := c.raw(t, src, net.JoinHostPort(pod, "80"),
				"PROXY TCP4 203.0.113.9 127.0.0.1 1234 80\r\nGET /who?pp-untrusted HTTP/1.1\r\nHost: who.example.com\r\nConnection: close\r\n\r\n")
			if status != "HTTP/1.1 200 OK" {
				t.Fatalf("answered %q %q; want 200", status, trunc(body))
			}
			c.assertClient(t, decodeEcho(t, body), src)
			c.logged(t, "client="+src+" ", "/who?pp-untrusted")
		})
	})
	t.Run("XForwardedFor", func(t *testing.T) {
		c := startClientAddressGateway(t, "e2e-rewrite-xff", v1alpha2.RewriteClientIPModeXForwardedFor)
		xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }
		t.Run("the backend and the access log see the client", func(t *testing.T) {
			x := c.send(t, "127.0.0.11", "/who?xff-backend", xff("203.0.113.7"))
			c.assertClient(t, x, "203.0.113.7")
			c.logged(t, "client=203.0.113.7 ", "/who?xff-backend")
		})
		t.Run("setIPRecursively skips the trusted hops", func(t *testing.T) {
			x := c.send(t, "127.0.0.11", "/who?xff-recursive", xff("198.51.100.5, "+c.trusted))
			if got := header(x, "X-Real-Ip"); got != "198.51.100.5" {
				t.Errorf("X-Real-IP %q; want 198.51.100.5, the right-most untrusted address", got)
			}
		})
		t.Run("rate limits are per client", func(t *testing.T) {
			c.limitsPerClient(t, func(i int) (string, http.Header) {
				return "127.0.0.11", xff(fmt.Sprintf("198.18.%d.%d", i/250, 1+i%250))
			})
		})
		t.Run("an untrusted peer's X-Forwarded-For is ignored", func(t *testing.T) {
			src, pod := c.untrustedPeer(t)
			status, body := c.raw(t, src, net.JoinHostPort(pod, "80"),
				"GET /who?xff-untrusted HTTP/1.1\r\nHost: who.example.com\r\nX-Forwarded-For: 203.0.113.66\r\nConnection: close\r\n\r\n")
			if status != "HTTP/1.1 200 OK" {
				t.Fatalf("answered %q %q; want 200", status, trunc(body))
			}
			if got := header(decodeEcho(t, body), "X-Real-Ip"); got != src {
				t.Errorf("X-Real-IP %q; want the peer's %s, not its X-Forwarded-For", got, src)
			}
			c.logged(t, "client="+src+" ", "/who?xff-untrusted")
		})
	})
}

// clientAddressGateway is a Gateway "gw" (class of its own) routing
// who.example.com and limited.example.com (one request a minute per client
// address) to an echo backend.
type clientAddressGateway struct {
	ns      string
	addr    string // the load balancer's address
	trusted string // the load balancer's source address toward the pods
}

func startClientAddressGateway(t *testing.T, ns string, mode v1alpha2.RewriteClientIPMode) *clientAddressGateway {
	t.Helper()
	ns = namespace(t, ns)
	create(t, echo(ns, "echo", 1)...)
	trusted := lbSource(t, ns, "app=echo")
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "class"}, Spec: v1alpha2.NginxProxySpec{
		RewriteClientIP: &v1alpha2.RewriteClientIP{
			Mode: ptr.To(mode), SetIPRecursively: ptr.To(true),
			TrustedAddresses: []v1alpha2.RewriteClientIPAddress{{Type: v1alpha2.RewriteClientIPIPAddressType, Value: trusted}},
		},
		Logging: &v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{
			Format: ptr.To(`client=$remote_addr uri=$request_uri status=$status`),
		}},
		AllowGatewayOverrides: &v1alpha2.GatewayOverrides{InfrastructureKeys: []string{loadbalancer.ProxyProtocolAnnotation}},
	}}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: gatewayv1.GatewayClassSpec{
		ControllerName: manager.DefaultControllerName,
		ParametersRef: &gatewayv1.ParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "class",
			Namespace: ptr.To(gatewayv1.Namespace(ns))},
	}}
	gw := gateway(ns, "gw")
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(ns)
	if mode == v1alpha2.RewriteClientIPModeProxyProtocol {
		gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{
			loadbalancer.ProxyProtocolAnnotation: "v1",
		}}
	}
	create(t, np, class, gw,
		httpRoute(ns, "who", "gw", "who.example.com", "/", "echo"),
		httpRoute(ns, "limited", "gw", "limited.example.com", "/", "echo"),
		rateLimit(ns, "per-client", "HTTPRoute", "limited", v1alpha1.RateLimit{
			RejectCode: ptr.To(int32(429)),
			Local:      &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{{Rate: "1r/m", Key: "$binary_remote_addr"}}},
		}))
	t.Cleanup(func() { _ = rt.Client.Delete(context.Background(), class) })
	c := &clientAddressGateway{ns: ns, trusted: trusted,
		addr: programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)}
	eventually(t, 60*time.Second, func() error {
		x, err := c.try("127.0.0.10", "who.example.com", "/who", nil)
		if err != nil {
			return err
		}
		if x.status != 200 || !strings.HasPrefix(x.echo.Pod, "echo-") {
			return fmt.Errorf("%d %s", x.status, trunc(x.body))
		}
		return nil
	})
	return c
}

// lbSource is the address the host (where the load balancer runs) sends
// from toward the pods selected by selector in ns: the peer NGINX sees
// the load balancer's connections come from.
func lbSource(t *testing.T, ns, selector string) string {
	t.Helper()
	ip := podIP(t, ns, selector)
	c, err := net.Dial("udp4", net.JoinHostPort(ip, "9")) // a route lookup; nothing is sent
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// podIP waits for a running pod of selector in ns and returns its address.
func podIP(t *testing.T, ns, selector string) string {
	t.Helper()
	var ip string
	eventually(t, 120*time.Second, func() error {
		pods, err := rt.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
				ip = p.Status.PodIP
				return nil
			}
		}
		return fmt.Errorf("no running pod of %s in %s", selector, ns)
	})
	return ip
}

// untrustedPeer is an address of the host's other than the trusted one
// (the tests connect from it to a data-plane pod directly), and that pod's
// address. Without one the test is skipped: the host has no second way to
// reach the pods.
func (c *clientAddressGateway) untrustedPeer(t *testing.T) (src, pod string) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || !n.IP.IsGlobalUnicast() || n.IP.String() == c.trusted {
			continue
		}
		src = n.IP.String()
		break
	}
	if src == "" {
		t.Skip("the host has no IPv4 address but the trusted one to reach a data-plane pod from")
	}
	return src, podIP(t, c.ns, provisioner.GatewayNameLabel+"=gw")
}

// clientFrom is an HTTP client whose connections (one per request) leave
// from src, as if from another client of the load balancer.
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func (c *clientAddressGateway) try(src, host, path string, h http.Header) (exchange, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+c.addr+path, nil)
	if err != nil {
		return exchange{}, err
	}
	req.Host = host
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := clientFrom(src).Do(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	x := exchange{status: resp.StatusCode, header: resp.Header, body: string(body)}
	_ = json.Unmarshal(body, &x.echo)
	return x, err
}

// send is a request to who.example.com from src through the load
// balancer, answered 200 by the backend.
func (c *clientAddressGateway) send(t *testing.T, src, path string, h http.Header) exchange {
	t.Helper()
	x, err := c.try(src, "who.example.com", path, h)
	if err != nil {
		t.Fatal(err)
	}
	if x.status != 200 || x.echo.Pod == "" {
		t.Fatalf("%s from %s: %d %s", path, src, x.status, trunc(x.body))
	}
	return x
}

// raw sends request over a connection from src to addr and returns the
// status line and the body.
func (c *clientAddressGateway) raw(t *testing.T, src, addr, request string) (status, body string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "no answer: " + err.Error(), ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Proto + " " + resp.Status, string(b)
}

// assertClient: the backend was told the client's address in X-Real-IP,
// and as the last address of X-Forwarded-For (NGINX appends its peer,
// the client's address once rewritten).
func (c *clientAddressGateway) assertClient(t *testing.T, x exchange, client string) {
	t.Helper()
	if got := header(x, "X-Real-Ip"); got != client {
		t.Errorf("X-Real-IP %q; want %s (headers %v)", got, client, x.echo.Headers)
	}
	xff := strings.Split(header(x, "X-Forwarded-For"), ",")
	if got := strings.TrimSpace(xff[len(xff)-1]); got != client {
		t.Errorf("X-Forwarded-For ends with %q; want %s (headers %v)", got, client, x.echo.Headers)
	}
}

// limitsPerClient: a first client's second request within the minute is
// refused (429) while another client's first is served. who(i) is the
// i-th client's source address and headers. Each attempt uses two new
// clients: one refused earlier (while the policy was being programmed) is
// not counted again.
func (c *clientAddressGateway) limitsPerClient(t *testing.T, who func(i int) (string, http.Header)) {
	t.Helper()
	i := 0
	eventually(t, 60*time.Second, func() error {
		a, b := i, i+1
		i += 2
		var codes []int
		for _, k := range []int{a, a, b} {
			src, h := who(k)
			x, err := c.try(src, "limited.example.com", "/", h)
			if err != nil {
				return err
			}
			codes = append(codes, x.status)
		}
		if fmt.Sprint(codes) != "[200 429 200]" {
			return fmt.Errorf("client %d twice then client %d: %v; want [200 429 200]", a, b, codes)
		}
		return nil
	})
}

// logged waits for a data-plane access log line with both parts.
func (c *clientAddressGateway) logged(t *testing.T, parts ...string) {
	t.Helper()
	eventually(t, 20*time.Second, func() error {
		pods := &corev1.PodList{}
		if err := rt.Client.List(context.Background(), pods, client.InNamespace(c.ns), client.MatchingLabels{provisioner.GatewayNameLabel: "gw"}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			lines, err := rt.PodLog(context.Background(), p)
			if err != nil {
				return err
			}
			for _, l := range lines {
				if containsAll(l, parts) {
					return nil
				}
			}
		}
		return fmt.Errorf("no access log line with %q", parts)
	})
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func header(x exchange, name string) string {
	for k, v := range x.echo.Headers {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func decodeEcho(t *testing.T, body string) exchange {
	t.Helper()
	x := exchange{status: 200, body: body}
	if err := json.Unmarshal([]byte(body), &x.echo); err != nil {
		t.Fatalf("not echo-basic's answer: %v: %s", err, trunc(body))
	}
	return x
}
