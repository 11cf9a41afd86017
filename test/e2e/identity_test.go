package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/podseal"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestOnlyTheDataPlaneGetsItsFiles: someone who may create pods in a
// Gateway's namespace (and request tokens there) cannot pass for its data
// plane. A pod with the data plane's ServiceAccount and labels whose spec
// Gatewall did not seal, and a copy of the real pod with another command,
// run real nginx-agents that connect with tokens bound to them: both are
// refused (logged with the pod and Gateway, counted as reason "pod"),
// never get a configuration (NGINX's readiness answers only on a pushed
// one) and are never counted as connected. A token requested for the real
// pod, presented from this host, is refused (reason "address"). Meanwhile
// the real data plane keeps serving and taking new configurations.
func TestOnlyTheDataPlaneGetsItsFiles(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-identity")
	gatewayClass(t)
	create(t, gateway(ns, "gw"), httpRoute(ns, "app", "gw", "app.example.com", "/", "echo"))
	create(t, echo(ns, "echo", 1)...)
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	addr := programmedAddress(t, gwKey, 120*time.Second)
	serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	real := dataPlanePod(t, ns, "gw")
	if _, ok := real.Annotations[podseal.Annotation]; !ok {
		t.Fatalf("the data-plane pod %s carries no seal", real.Name)
	}
	leader := rt.LeaderPod(t)
	token := rt.MetricsToken(t, "e2e-identity-metrics", true)
	refusals := func(reason string) float64 {
		v, _ := testenv.Series(testenv.ManagerMetrics(t, leader, token), "gatewall_agent_refusals_total", map[string]string{"reason": reason})
		return v
	}
	podRefusalsBefore, addressRefusalsBefore := refusals("pod"), refusals("address")

	// The impostors: copies of the real pod, which the Deployment's
	// ReplicaSet does not adopt (no pod-template-hash).
	impostor := func(name string, change func(p *corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: maps.Clone(real.Labels), Annotations: maps.Clone(real.Annotations)},
			Spec:       *real.Spec.DeepCopy(),
		}
		delete(p.Labels, "pod-template-hash")
		p.Spec.NodeName, p.Spec.Priority, p.Spec.PreemptionPolicy = "", nil, nil
		change(p)
		return p
	}
	unsealed := impostor("impostor-unsealed", func(p *corev1.Pod) { delete(p.Annotations, podseal.Annotation) })
	recommanded := impostor("impostor-command", func(p *corev1.Pod) {
		for i, c := range p.Spec.Containers {
			if c.Name == provisioner.EndpointsContainer {
				p.Spec.Containers[i].Command = []string{"/bin/sh", "-c", `exec /usr/bin/gatewall-endpoints "$@"`, "sh"}
			}
		}
	})
	if unsealed.Spec.ServiceAccountName != real.Spec.ServiceAccountName || unsealed.Labels[provisioner.GatewayNameLabel] != "gw" {
		t.Fatalf("the impostor is not the data plane's look-alike: %+v", unsealed.ObjectMeta)
	}
	create(t, unsealed, recommanded)

	// Both impostors' agents connect and are refused, each for its reason.
	wants := map[string]string{
		unsealed.Name:    "carries no seal",
		recommanded.Name: "its spec is not one Gatewall rendered for this Gateway",
	}
	logged := map[string]string{}
	eventually(t, 3*time.Minute, func() error {
		lines, err := rt.PodLog(ctx, leader)
		if err != nil {
			return err
		}
		for _, line := range lines {
			var l struct {
				Msg, Pod, Gateway, Refusal, Reason string
			}
			if json.Unmarshal([]byte(line), &l) != nil || l.Refusal != "pod" {
				continue
			}
			for name, why := range wants {
				if l.Pod == ns+"/"+name && l.Gateway == gwKey.String() && strings.Contains(l.Reason, why) {
					logged[name] = l.Reason
				}
			}
		}
		if len(logged) < len(wants) {
			return fmt.Errorf("refusals logged: %v; want one for each of %v", logged, wants)
		}
		return nil
	})
	for name, why := range logged {
		t.Logf("refused %s: %s", name, why)
	}
	if n := refusals("pod") - podRefusalsBefore; n < 2 {
		t.Errorf("gatewall_agent_refusals_total{reason=\"pod\"} grew by %v, want at least 2", n)
	}

	// A token bound to the real pod, requested by whoever may request
	// tokens in the namespace, is of no use from elsewhere than the pod.
	tr, err := rt.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, real.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{provisioner.TokenAudience}, ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: real.Name, UID: real.UID},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The agent server's certificate is the installation's; what is
	// tested is what it refuses, not its name.
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}) //nolint:gosec
	conn, err := grpc.NewClient(net.JoinHostPort(leader.Status.PodIP, "8443"), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpcCtx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", tr.Status.Token), 20*time.Second)
	defer cancel()
	_, err = mpi.NewCommandServiceClient(conn).UpdateDataPlaneHealth(rpcCtx, &mpi.UpdateDataPlaneHealthRequest{})
	if st, _ := status.FromError(err); st.Code() != codes.Unauthenticated || !strings.Contains(st.Message(), "not the pod's address") {
		t.Fatalf("the real pod's token from this host: %v, want Unauthenticated for the address", err)
	}
	if n := refusals("address") - addressRefusalsBefore; n < 1 {
		t.Errorf("gatewall_agent_refusals_total{reason=\"address\"} grew by %v, want at least 1", n)
	}

	// The real data plane keeps working: a new route is served.
	create(t, httpRoute(ns, "new", "gw", "new.example.com", "/", "echo"))
	serves(t, addr, "new.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 10*time.Second)

	// The impostors got nothing: they run (their containers started and
	// connected) but NGINX there never ran a pushed configuration, and the
	// manager counts one agent of the Gateway connected, the real one's.
	for _, p := range []*corev1.Pod{unsealed, recommanded} {
		got := &corev1.Pod{}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: p.Name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != corev1.PodRunning || testenv.Ready(*got) {
			t.Errorf("impostor %s: phase %s, ready %v; want running, never ready", p.Name, got.Status.Phase, testenv.Ready(*got))
		}
	}
	connected, _ := testenv.Series(testenv.ManagerMetrics(t, leader, token), "gatewall_agents_connected", map[string]string{"namespace": ns, "gateway": "gw"})
	if connected != 1 {
		t.Errorf("gatewall_agents_connected of the Gateway: %v, want 1 (the real pod)", connected)
	}
}
