package envtest

import (
	"context"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestAgentNetworkPolicyComponent builds an overlay of config/default with
// config/components/agent-network-policy and checks what the policy says
// against the objects it is about: it selects the manager's pods and no
// data-plane pod, opens the manager's agent port to the labels every
// data-plane pod carries (a Gateway's spec.infrastructure cannot take them
// away) and to nothing else, and names ports the manager's container has;
// the API server takes it (server-side dry-run). The local runtime's network
// plugin does not enforce NetworkPolicies, so their effect on traffic is
// not tested here.
func TestAgentNetworkPolicyComponent(t *testing.T) {
	ctx := context.Background()
	config := filepath.Join(testenv.RepoRoot(), "config")
	objs, err := manifest.KustomizeOverlay(filepath.Join(config, "default"), filepath.Join(config, "components", "agent-network-policy"))
	if err != nil {
		t.Fatal(err)
	}
	var np *networkingv1.NetworkPolicy
	var manager *appsv1.Deployment
	var namespaces []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "NetworkPolicy":
			np = &networkingv1.NetworkPolicy{}
			convert(t, o, np)
		case "Deployment":
			manager = &appsv1.Deployment{}
			convert(t, o, manager)
		case "Namespace":
			namespaces = append(namespaces, o)
		}
	}
	if np == nil || manager == nil {
		t.Fatalf("the overlay has no NetworkPolicy (%v) or no manager Deployment (%v)", np != nil, manager != nil)
	}
	if np.Namespace != manager.Namespace {
		t.Errorf("NetworkPolicy in %q, the manager in %q", np.Namespace, manager.Namespace)
	}
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !selector.Matches(labels.Set(manager.Spec.Template.Labels)) {
		t.Errorf("the policy's podSelector %v does not select the manager's pods %v", selector, manager.Spec.Template.Labels)
	}
	// A data-plane pod, whose Gateway tries to look like the manager.
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gw"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: "nginx",
		Infrastructure: &gatewayv1.GatewayInfrastructure{Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{
			"app.kubernetes.io/name": "gatewall", "app.kubernetes.io/component": "controller"}},
	}}
	dataPlane := labels.Set(provisioner.Labels(gw, nil))
	if selector.Matches(dataPlane) {
		t.Errorf("the policy selects data-plane pods %v: it would cut their traffic", dataPlane)
	}
	ports := map[string]bool{}
	for _, p := range manager.Spec.Template.Spec.Containers[0].Ports {
		ports[p.Name] = true
	}
	agentOpen := false
	for i, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || !ports[p.Port.String()] {
				t.Errorf("ingress[%d] names port %v, which the manager's container does not have (%v)", i, p.Port, ports)
				continue
			}
			if p.Port.String() != "agent" {
				continue
			}
			if len(rule.From) == 0 {
				t.Errorf("ingress[%d] opens the agent port to everyone", i)
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil {
					t.Errorf("ingress[%d] opens the agent port to whole namespaces", i)
					continue
				}
				s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil {
					t.Fatal(err)
				}
				if !s.Matches(dataPlane) {
					t.Errorf("ingress[%d] does not admit data-plane pods %v", i, dataPlane)
				}
				if s.Matches(labels.Set{"app": "tenant"}) {
					t.Errorf("ingress[%d] admits any pod to the agent port", i)
				}
				agentOpen = true
			}
		}
	}
	if !agentOpen {
		t.Error("no rule opens the agent port to data-plane pods")
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", namespaces); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(np)
	if err != nil {
		t.Fatal(err)
	}
	u.SetUnstructuredContent(m)
	u.SetGroupVersionKind(networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"))
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", []*unstructured.Unstructured{u}, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
