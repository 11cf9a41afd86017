package loadbalancer_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestControllerProxyProtocol, against a real API server: a LoadBalancer
// Service's annotation chooses whether its connections open with a PROXY
// header and which version, as it changes; an unknown value is named in
// the Service's LoadBalancerProxyProtocol condition (connections then
// carry no header), which goes once the value is known again.
func TestControllerProxyProtocol(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := loadbalancer.Start(ctx, cs, loadbalancer.Options{CIDR: "127.0.77.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lb.Stop)

	// The backend answers each connection with what it read before the
	// client's "hello\n".
	// An EndpointSlice names no loopback address: the backend listens on
	// one of the host's others.
	host := hostAddress(t)
	backend, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				var got []byte
				b := make([]byte, 1)
				for len(got) < 256 && !strings.HasSuffix(string(got), "hello\n") {
					if _, err := c.Read(b); err != nil {
						break
					}
					got = append(got, b[0])
				}
				_, _ = c.Write([]byte(strings.TrimSuffix(string(got), "hello\n")))
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(backend.Addr().String())
	backendPort, _ := strconv.Atoi(port)

	const ns, name, svcPort = "default", "lb", 18080
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{loadbalancer.ProxyProtocolAnnotation: "v1"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "http", Port: svcPort, Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(backendPort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// before is what the backend read before the client's bytes on a
	// connection through the load balancer.
	before := func() (string, error) {
		addr, ok := lb.Address(ns, name)
		if !ok {
			return "", fmt.Errorf("no address yet")
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(svcPort)), 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "hello\n"); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		return string(b), err
	}
	condition := func() (*metav1.Condition, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return meta.FindStatusCondition(s.Status.Conditions, loadbalancer.ConditionProxyProtocol), nil
	}
	annotate := func(v string) {
		t.Helper()
		s, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Annotations[loadbalancer.ProxyProtocolAnnotation] = v
		if _, err := cs.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	testenv.Eventually(t, 20*time.Second, func() error {
		got, err := before()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "PROXY TCP4 127.0.0.1 127.0.77.") || !strings.HasSuffix(got, " 18080\r\n") {
			return fmt.Errorf("v1: the backend read %q first; want the PROXY header", got)
		}
		return nil
	})

	annotate("proxy please")
	testenv.Eventually(t, 20*time.Second, func() error {
		c, err := condition()
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `"proxy please"`) {
			return fmt.Errorf("condition %+v; want False naming the value", c)
		}
		got, err := before()
		if err != nil {
			return err
		}
		if got != "" {
			return fmt.Errorf("unknown value: the backend read %q first; want the client's bytes", got)
		}
		return nil
	})

	annotate("v2")
	testenv.Eventually(t, 20*time.Second, func() error {
		c, err := condition()
		if err != nil {
			return err
		}
		if c != nil {
			return fmt.Errorf("condition %+v left after the value became known", c)
		}
		got, err := before()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "\r\n\r\n\x00\r\nQUIT\n\x21\x11") || len(got) != 28 {
			return fmt.Errorf("v2: the backend read %q first; want a v2 header for TCP over IPv4", got)
		}
		return nil
	})
}

// hostAddress is an IPv4 address of the host's other than loopback; the
// test is skipped without one.
func hostAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("the host has no IPv4 address but loopback for the backend an EndpointSlice can name")
	return ""
}
