package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// upload POSTs n bytes to /upload and returns the status and body.
func upload(addr, host string, n int) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+net.JoinHostPort(addr, "80")+"/upload", bytes.NewReader(make([]byte, n)))
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// connectionHeaders sends n requests on one connection and returns each
// response's Connection header ("" when absent, "close" when the response
// closes the connection), stopping when NGINX closes.
func connectionHeaders(t *testing.T, addr, host string, n int) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "80"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(conn)
	var out []string
	for i := 0; i < n; i++ {
		if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
			break
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Close { // net/http removes the Connection: close header and says so here
			out = append(out, "close")
			break
		}
		out = append(out, resp.Header.Get("Connection"))
	}
	return out
}

func clientSettings(ns, name, kind, target string, spec v1alpha1.ClientSettingsPolicySpec) *v1alpha1.ClientSettingsPolicy {
	spec.TargetRef = gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)}
	return &v1alpha1.ClientSettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// TestClientSettings: a 5 MiB upload is refused with 413 under NGINX's
// default 1m body limit and reaches the backend under a route's
// ClientSettingsPolicy maxSize 10m, while another route keeps the default;
// a Gateway policy's keepAlive.requests closes client connections after
// that many requests.
func TestClientSettings(t *testing.T) {
	ns := namespace(t, "e2e-clientsettings")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, testBackend(t, ns, "backend")...)
	create(t, httpRoute(ns, "uploads", "gw", "uploads.example.com", "/", "backend"))
	create(t, httpRoute(ns, "other", "gw", "other.example.com", "/", "backend"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)
	serves(t, addr, "uploads.example.com", "/", 200, "testbackend", 60*time.Second)
	const size = 5 << 20

	t.Run("a 5 MiB upload: 413 by default, accepted under maxSize 10m on its route only", func(t *testing.T) {
		if code, body, err := upload(addr, "uploads.example.com", size); err != nil || code != http.StatusRequestEntityTooLarge {
			t.Fatalf("without a policy: %d %q %v, want 413", code, trunc(body), err)
		}
		create(t, clientSettings(ns, "big-uploads", "HTTPRoute", "uploads", v1alpha1.ClientSettingsPolicySpec{
			Body: &v1alpha1.ClientBody{MaxSize: ptr.To(v1alpha1.ByteSize("10m"))}}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.ClientSettingsPolicy{}, ns, "big-uploads") })
		code, body, err := upload(addr, "uploads.example.com", size)
		if err != nil || code != http.StatusOK || strings.TrimSpace(body) != fmt.Sprintf("received %d bytes", size) {
			t.Fatalf("under maxSize 10m: %d %q %v, want 200 and the backend receiving %d bytes", code, trunc(body), err, size)
		}
		if code, body, err := upload(addr, "other.example.com", size); err != nil || code != http.StatusRequestEntityTooLarge {
			t.Fatalf("another route: %d %q %v, want 413 still", code, trunc(body), err)
		}
	})

	t.Run("keepAlive.requests on the Gateway closes connections after that many requests", func(t *testing.T) {
		if got := connectionHeaders(t, addr, "other.example.com", 3); len(got) != 3 || got[2] == "close" {
			t.Fatalf("NGINX's default (1000 requests): Connection headers %q, want 3 kept-alive responses", got)
		}
		create(t, clientSettings(ns, "short-connections", "Gateway", "gw", v1alpha1.ClientSettingsPolicySpec{
			KeepAlive: &v1alpha1.ClientKeepAlive{Requests: ptr.To(int32(2))}}))
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.ClientSettingsPolicy{}, ns, "short-connections") })
		got := connectionHeaders(t, addr, "other.example.com", 3)
		if len(got) != 2 || got[0] == "close" || got[1] != "close" {
			t.Fatalf("under keepAlive.requests 2: Connection headers %q, want the second response to close the connection", got)
		}
		// The route's own policy sets only maxSize: it inherits requests from the Gateway.
		if got := connectionHeaders(t, addr, "uploads.example.com", 3); len(got) != 2 || got[1] != "close" {
			t.Fatalf("the route with its own policy: Connection headers %q, want the Gateway's limit inherited", got)
		}
	})
}
