package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
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

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/local/images"
)

// testBackend is a Deployment and Service running test/e2e/testbackend
// from its image (images.TestBackend, built by `make images`).
func testBackend(t *testing.T, ns, name string) []client.Object {
	t.Helper()
	c := corev1.Container{
		Name: "backend", Image: images.TestBackend, Args: []string{"-listen", ":8080"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	return app(ns, name, 1, c, nil, corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)})
}

// firstChunk returns how long the first line of GET path took to arrive and
// how long the whole response took.
func firstChunk(t *testing.T, addr, host, path string) (time.Duration, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "first" {
		t.Fatalf("first line %q, %v", line, err)
	}
	first := time.Since(start)
	rest, _ := r.ReadString('\n')
	if strings.TrimSpace(rest) != "second" {
		t.Fatalf("second line %q", rest)
	}
	return first, time.Since(start)
}

func setPolicy(t *testing.T, ns, name, route string, b v1alpha1.ProxyBuffering) {
	t.Helper()
	p := &v1alpha1.ProxySettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ProxySettingsPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: gatewayv1.ObjectName(route)}},
			Buffering:  &b,
		},
	}
	create(t, p)
}

// TestProxyBuffering: with buffering disabled on a route, the first chunk of
// a streamed response reaches the client before the backend finishes; a
// response header larger than NGINX's default buffer fails until the route's
// bufferSize allows it.
func TestProxyBuffering(t *testing.T) {
	ns := namespace(t, "e2e-buffering")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, testBackend(t, ns, "backend")...)
	create(t, httpRoute(ns, "stream", "gw", "stream.example.com", "/", "backend"))
	create(t, httpRoute(ns, "headers", "gw", "headers.example.com", "/", "backend"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)
	serves(t, addr, "stream.example.com", "/", 200, "testbackend", 60*time.Second)

	t.Run("buffering disabled: NGINX stops absorbing the response for a stalled client", func(t *testing.T) {
		// Buffering on (NGINX's default): NGINX reads the whole response from
		// the backend while the client reads nothing.
		if got := stalledBackend(t, addr, "stream.example.com", "on"); got != "done" {
			t.Fatalf("with buffering on the backend is %q while the client stalls, want done", got)
		}
		setPolicy(t, ns, "no-buffering", "stream", v1alpha1.ProxyBuffering{Disable: ptr.To(true)})
		eventually(t, 60*time.Second, func() error { return policyProgrammed(ns, "no-buffering") })
		if got := stalledBackend(t, addr, "stream.example.com", "off"); got != "writing" {
			t.Fatalf("with buffering off the backend is %q while the client stalls, want writing", got)
		}
		first, total := firstChunk(t, addr, "stream.example.com", "/stream")
		t.Logf("buffering off: first chunk after %s, whole response after %s", first.Round(time.Millisecond), total.Round(time.Millisecond))
		if first >= total-time.Second {
			t.Errorf("the first chunk arrived after %s, with the rest (%s): not streamed", first, total)
		}
	})

	t.Run("response headers larger than the default buffer", func(t *testing.T) {
		// 6 KiB of headers: more than NGINX's default proxy_buffer_size (4k).
		serves(t, addr, "headers.example.com", "/headers?bytes=6144", 502, "", 30*time.Second)
		setPolicy(t, ns, "bigger-header-buffer", "headers", v1alpha1.ProxyBuffering{BufferSize: ptr.To(v1alpha1.Size("8k"))})
		eventually(t, 60*time.Second, func() error { return policyProgrammed(ns, "bigger-header-buffer") })
		serves(t, addr, "headers.example.com", "/headers?bytes=6144", 200, "ok", 30*time.Second)
	})
}

// stalledBackend requests 64 MiB through NGINX without reading the
// response, waits, and asks the backend (on another connection) whether it
// has written everything.
func stalledBackend(t *testing.T, addr, host, id string) string {
	t.Helper()
	conn, err := net.Dial("tcp", net.JoinHostPort(addr, "80"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /big?id=%s&mib=64 HTTP/1.1\r\nHost: %s\r\n\r\n", id, host); err != nil {
		t.Fatal(err)
	}
	var status string
	eventually(t, 10*time.Second, func() error {
		_, body, err := get(addr, host, "/status?id="+id)
		status = strings.TrimSpace(body)
		if err != nil || status == "unknown" {
			return errf("backend has not started the response: %q %v", status, err)
		}
		return nil
	})
	time.Sleep(2 * time.Second) // let NGINX read whatever it is going to
	_, body, err := get(addr, host, "/status?id="+id)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(body)
}

func policyProgrammed(ns, name string) error {
	return kindProgrammed(&v1alpha1.ProxySettingsPolicy{}, ns, name)
}

// kindProgrammed is policyProgrammed for a policy of any kind (p is an
// empty object of the kind).
func kindProgrammed(p v1alpha1.PolicyWithStatus, ns, name string) error {
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p); err != nil {
		return err
	}
	for _, a := range p.PolicyStatus().Ancestors {
		for _, c := range a.Conditions {
			if c.Type == "Programmed" && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
	}
	return errf("policy %s not programmed: %+v", name, p.PolicyStatus().Ancestors)
}
