package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
)

// echoHeaders is the part of echo-basic's HTTP answer the test reads.
type echoHeaders struct {
	Headers map[string][]string `json:"headers"`
	Pod     string              `json:"pod"`
}

// TestHTTPAndGRPCOnOnePort: an HTTPRoute and a GRPCRoute share a cleartext
// listener. HTTP/1.1 clients and gRPC clients (HTTP/2 with prior knowledge)
// are both served on port 80, and backends see the client's address and
// port as on any other listener.
func TestHTTPAndGRPCOnOnePort(t *testing.T) {
	ns := namespace(t, "e2e-mixed")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "web", 1)...)
	create(t, grpcBackend(ns, "rpc")...)
	create(t, httpRoute(ns, "web", "gw", "web.example.com", "/", "web"))
	create(t, &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rpc"},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"rpc.example.com"},
			Rules: []gatewayv1.GRPCRouteRule{{
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: "rpc", Port: ptr.To(gatewayv1.PortNumber(8080))}}}},
			}},
		},
	})
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)
	serves(t, addr, "web.example.com", "/", 200, `"pod": "web-`, 60*time.Second)

	conn, err := grpc.NewClient(net.JoinHostPort(addr, "80"), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("rpc.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	eventually(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := pb.NewGrpcEchoClient(conn).Echo(ctx, &pb.EchoRequest{})
		if err != nil {
			return err
		}
		if pod := resp.GetAssertions().GetContext().GetPod(); len(pod) < 4 || pod[:4] != "rpc-" {
			return fmt.Errorf("answered by pod %q, want one of rpc", pod)
		}
		return nil
	})

	// HTTP/1.1 still works after gRPC connections, and the backend sees
	// the client's address and the listener's port.
	code, body, err := get(addr, "web.example.com", "/")
	if err != nil || code != 200 {
		t.Fatalf("HTTP/1.1 after gRPC: %d %v", code, err)
	}
	var got echoHeaders
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("echo answer %q: %v", trunc(body), err)
	}
	if p := got.Headers["X-Forwarded-Port"]; len(p) != 1 || p[0] != "80" {
		t.Errorf("X-Forwarded-Port = %q, want 80", p)
	}
	if ip := got.Headers["X-Real-Ip"]; len(ip) != 1 || net.ParseIP(ip[0]) == nil {
		t.Errorf("X-Real-IP = %q, want the client's IP address", ip)
	}
}

// grpcBackend is echo-basic serving gRPC, behind a Service whose port says h2c.
func grpcBackend(ns, name string) []client.Object {
	objs := echo(ns, name, 1)
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			c := &o.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "GRPC_ECHO_SERVER", Value: "1"})
		case *corev1.Service:
			o.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c")
		}
	}
	return objs
}
