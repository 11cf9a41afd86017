package e2e

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestDrainWithDisruptionBudget: a Gateway whose NginxProxy asks for two
// data-plane replicas and a PodDisruptionBudget (minAvailable 1) is
// drained as `kubectl drain` drains the local runtime's one node: the node
// is cordoned, then its pods are evicted through the Eviction API. The
// first data-plane pod's eviction is granted; the second's is refused
// (429) for as long as only one pod is ready, since the first's
// replacement cannot be scheduled on the cordoned node. Once the node is
// uncordoned the replacement becomes ready and the second eviction is
// granted. Clients send through the load balancer and the Service's
// cluster IP (TestScaleUnderLoad's) all along, and every request is
// answered 200: the budget keeps a pod serving, and each evicted pod drains
// (provisioner/drain.go).
func TestDrainWithDisruptionBudget(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-drain")
	gatewayClass(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Replicas:            ptr.To(int32(2)),
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
		}},
	}}
	create(t, np, gatewayWithProxy(ns, "gw", "gw"))
	create(t, echo(ns, "echo", 2)...)
	create(t, httpRoute(ns, "load", "gw", "load.example.com", "/", "echo"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	serves(t, addr, "load.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, 2) })
	budgetAllows(t, ns, 1)

	clusterIP := serviceClusterIP(t, ns)
	if err := answersWithin(nodeClient(), clusterIP, "load.example.com", 30*time.Second); err != nil {
		t.Errorf("the Service's cluster IP %s from the node: %v", clusterIP, err)
		clusterIP = ""
	}
	load := startLoad(addr, clusterIP, "load.example.com")
	defer load.stop()
	load.phase("2 pods")
	time.Sleep(3 * time.Second)

	node := theNode(t)
	load.phase("cordoned")
	cordon(t, node, true)
	t.Cleanup(func() { cordon(t, node, false) })
	pods := readyPods(t, ns)
	if len(pods) != 2 {
		t.Fatalf("ready data-plane pods %v; want 2", pods)
	}
	first, second := pods[0], pods[1]

	load.phase("first evicted")
	if err := evict(ctx, ns, first); err != nil {
		t.Fatalf("evicting %s, the first of two ready pods: %v; want it granted", first, err)
	}
	// kubectl drain tries a refused eviction again every 5 s; so does
	// this, while the first pod's replacement waits for a node.
	for i := range 3 {
		err := evict(ctx, ns, second)
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("evicting %s, the one ready pod left (try %d): %v; want 429, refused by the budget", second, i+1, err)
		}
		if i < 2 {
			time.Sleep(5 * time.Second)
		}
	}
	eventually(t, 30*time.Second, func() error { return unschedulable(ns) })

	load.phase("uncordoned")
	cordon(t, node, false)
	uncordoned := time.Now()
	eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, 2) })
	replaced := time.Since(uncordoned)
	load.phase("second evicted")
	eventually(t, 60*time.Second, func() error { return evict(ctx, ns, second) })
	granted := time.Since(uncordoned)
	eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, 2) })
	t.Logf("after the uncordon: two ready pods (the first's replacement ready, the first gone) in %s, the second eviction granted in %s, its replacement ready in %s",
		replaced.Round(100*time.Millisecond), granted.Round(100*time.Millisecond), time.Since(uncordoned).Round(100*time.Millisecond))
	load.phase("2 pods again")
	time.Sleep(3 * time.Second)
	load.stop()

	total, failed := load.report(t)
	if failed > 0 {
		t.Errorf("%d of %d requests failed while the node was drained", failed, total)
	}
	if total < 100 {
		t.Errorf("only %d requests sent", total)
	}
	for _, p := range readyPods(t, ns) {
		if p == first || p == second {
			t.Errorf("pod %s still runs after its eviction", p)
		}
	}
}

// TestAutoscalerFollowsNginxProxy: the HorizontalPodAutoscaler Gatewall
// makes for an NginxProxy's deployment.autoscaling is owned by the Gateway
// as its Deployment and PodDisruptionBudget are (and goes with it), scales
// the Deployment, and follows the NginxProxy's minReplicas and
// maxReplicas. The local runtime has no metrics server, so nothing here
// scales by load: kube-controller-manager's autoscaler only keeps the
// Deployment within the bounds (raising minReplicas to 2 makes 2 pods,
// lowering maxReplicas to 1 makes 1), which it does before it reads any
// metric.
func TestAutoscalerFollowsNginxProxy(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-autoscaler")
	gatewayClass(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Autoscaling: &v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr.To(int32(1)), MaxReplicas: 3,
				TargetCPUUtilizationPercentage: ptr.To(int32(80))},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
		}},
	}}
	gw := gatewayWithProxy(ns, "gw", "gw")
	create(t, np, gw)
	create(t, echo(ns, "echo", 1)...)
	create(t, httpRoute(ns, "hpa", "gw", "hpa.example.com", "/", "echo"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	serves(t, addr, "hpa.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	key := types.NamespacedName{Namespace: ns, Name: "gw-nginx"}
	if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(gw), gw); err != nil {
		t.Fatal(err)
	}

	t.Run("owned by the Gateway as the Deployment is", func(t *testing.T) {
		eventually(t, 30*time.Second, func() error {
			d, h, b := &appsv1.Deployment{}, &autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{}
			for _, o := range []client.Object{d, h, b} {
				if err := rt.Client.Get(ctx, key, o); err != nil {
					return err
				}
			}
			owners := d.OwnerReferences
			if len(owners) != 1 || owners[0].UID != gw.UID || owners[0].Kind != "Gateway" || !ptr.Deref(owners[0].Controller, false) {
				return fmt.Errorf("the Deployment's owners %+v; want the Gateway %s as controller", owners, gw.UID)
			}
			for kind, o := range map[string]client.Object{"HorizontalPodAutoscaler": h, "PodDisruptionBudget": b} {
				if !reflect.DeepEqual(o.GetOwnerReferences(), owners) {
					return fmt.Errorf("the %s's owners %+v; want the Deployment's %+v", kind, o.GetOwnerReferences(), owners)
				}
				if o.GetLabels()[provisioner.GatewayNameLabel] != "gw" {
					return fmt.Errorf("the %s's labels %v", kind, o.GetLabels())
				}
			}
			if h.Spec.ScaleTargetRef != (autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: key.Name}) {
				return fmt.Errorf("the autoscaler scales %+v", h.Spec.ScaleTargetRef)
			}
			return nil
		})
	})
	bounds := func(t *testing.T, lowest, most int32) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p := &v1alpha2.NginxProxy{}
			if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(np), p); err != nil {
				return err
			}
			p.Spec.Kubernetes.Deployment.Autoscaling.MinReplicas = ptr.To(lowest)
			p.Spec.Kubernetes.Deployment.Autoscaling.MaxReplicas = most
			return rt.Client.Update(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			if err := rt.Client.Get(ctx, key, h); err != nil {
				return err
			}
			if ptr.Deref(h.Spec.MinReplicas, 0) != lowest || h.Spec.MaxReplicas != most {
				return fmt.Errorf("the autoscaler's bounds %d–%d; want %d–%d", ptr.Deref(h.Spec.MinReplicas, 0), h.Spec.MaxReplicas, lowest, most)
			}
			return nil
		})
	}
	t.Run("minReplicas raised to 2: two pods", func(t *testing.T) {
		bounds(t, 2, 3)
		// The autoscaler's controller syncs every 15 s.
		eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, 2) })
		scaledByTheAutoscaler(t, key, 2)
		serves(t, addr, "hpa.example.com", "/", 200, `"pod": "echo-`, 30*time.Second)
	})
	t.Run("maxReplicas lowered to 1: one pod", func(t *testing.T) {
		bounds(t, 1, 1)
		eventually(t, 180*time.Second, func() error { return dataPlanePods(ctx, ns, 1) })
		scaledByTheAutoscaler(t, key, 1)
		serves(t, addr, "hpa.example.com", "/", 200, `"pod": "echo-`, 30*time.Second)
	})
	t.Run("it goes with the Gateway", func(t *testing.T) {
		if err := rt.Client.Delete(ctx, gw); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, func() error {
			for kind, o := range map[string]client.Object{"Deployment": &appsv1.Deployment{},
				"HorizontalPodAutoscaler": &autoscalingv2.HorizontalPodAutoscaler{}, "PodDisruptionBudget": &policyv1.PodDisruptionBudget{}} {
				if err := rt.Client.Get(ctx, key, o); !apierrors.IsNotFound(err) {
					return fmt.Errorf("the %s after the Gateway's deletion: %v", kind, err)
				}
			}
			return nil
		})
	})
}

// scaledByTheAutoscaler fails unless the autoscaler of the Deployment key
// wants n replicas and says it scaled the Deployment to n (its event
// SuccessfulRescale, "New size: n"): Gatewall leaves the replicas to it.
func scaledByTheAutoscaler(t *testing.T, key types.NamespacedName, n int32) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := rt.Client.Get(context.Background(), key, h); err != nil {
			return err
		}
		if h.Status.DesiredReplicas != n {
			return fmt.Errorf("the autoscaler wants %d replicas; want %d", h.Status.DesiredReplicas, n)
		}
		events, err := rt.Clientset.CoreV1().Events(key.Namespace).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=" + key.Name})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range events.Items {
			if e.Reason == "SuccessfulRescale" && strings.HasPrefix(e.Message, fmt.Sprintf("New size: %d;", n)) {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("no event of the autoscaler scaling to %d: %q", n, seen)
	})
}

// gatewayPods are the data-plane pods of the Gateway gw in ns.
func gatewayPods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	pods, err := listGatewayPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// listGatewayPods lists the data-plane pods of the Gateway gw in ns.
func listGatewayPods(ctx context.Context, ns string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := rt.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{provisioner.GatewayNameLabel: "gw"}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// gatewayWithProxy is the Gateway name in ns whose infrastructure names
// its own NginxProxy proxy.
func gatewayWithProxy(ns, name, proxy string) *gatewayv1.Gateway {
	gw := gateway(ns, name)
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: proxy}}
	return gw
}

// budgetAllows waits until the Gateway gw's PodDisruptionBudget in ns
// allows n disruptions: the disruption controller has counted its pods.
func budgetAllows(t *testing.T, ns string, n int32) {
	t.Helper()
	eventually(t, 60*time.Second, func() error {
		b := &policyv1.PodDisruptionBudget{}
		if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "gw-nginx"}, b); err != nil {
			return err
		}
		if b.Status.DisruptionsAllowed != n {
			return fmt.Errorf("the budget allows %d disruptions (status %+v); want %d", b.Status.DisruptionsAllowed, b.Status, n)
		}
		return nil
	})
}

// theNode is the local runtime's one node.
func theNode(t *testing.T) string {
	t.Helper()
	nodes, err := rt.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("%d nodes; want the local runtime's one", len(nodes.Items))
	}
	return nodes.Items[0].Name
}

// cordon marks node unschedulable (on) or schedulable, as kubectl cordon
// and uncordon do.
func cordon(t *testing.T, node string, on bool) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on)
	if _, err := rt.Clientset.CoreV1().Nodes().Patch(context.Background(), node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("cordon %s %v: %v", node, on, err)
	}
}

// evict asks the Eviction API to evict pod, as kubectl drain does.
func evict(ctx context.Context, ns, pod string) error {
	return rt.Clientset.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}})
}

// readyPods names the Gateway gw's ready data-plane pods in ns, not being
// deleted, sorted.
func readyPods(t *testing.T, ns string) []string {
	t.Helper()
	var names []string
	for _, p := range gatewayPods(t, ns) {
		if testenv.Ready(p) && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// unschedulable is nil once a data-plane pod of the Gateway gw in ns
// waits for a node: the evicted pod's replacement, on the cordoned node.
func unschedulable(ns string) error {
	pods, err := listGatewayPods(context.Background(), ns)
	if err != nil {
		return err
	}
	var seen []string
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return nil
			}
		}
		seen = append(seen, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
	}
	return fmt.Errorf("no data-plane pod waits for a node while it is cordoned: %v", seen)
}
