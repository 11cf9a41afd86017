package scale

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// The fan-out phases push one change to many data-plane pods and time it to
// the last pod serving it, each pod asked on its own address. They use
// their own small Gateways: on two cores, n reloads of the big Gateway's
// configuration would measure the cores, not the fan-out.

// fanOutPods scales one Gateway to n data-plane pods (NginxProxy replicas).
func fanOutPods(t *testing.T, ns string, n int) {
	np := &v1alpha2.NginxProxy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fan"},
		Spec: v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr.To(int32(n))},
		}},
	}
	gw := testenv.Gateway(ns, "fan")
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "fan"}}
	rt.Create(t, np, gw, testenv.HTTPRoute(ns, "fan-base", "fan", "fan-base.scale.test", "/", "echo"))
	pods := readyPods(t, ns, []string{"fan"}, n)
	fanOut(t, fmt.Sprintf("%d pods of one Gateway", n), pods, func() {
		rt.Create(t, testenv.HTTPRoute(ns, "fan-new", "fan", "fan-new.scale.test", "/", "echo"))
	}, "fan-new.scale.test")
}

// fanOutGateways makes n Gateways of one pod each and adds one route to all
// of them.
func fanOutGateways(t *testing.T, ns string, n int) {
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("g%d", i)
		names = append(names, name)
		rt.Create(t, testenv.Gateway(ns, name), testenv.HTTPRoute(ns, name+"-base", name, name+".scale.test", "/", "echo"))
	}
	pods := readyPods(t, ns, names, 1)
	fanOut(t, fmt.Sprintf("%d Gateways of one pod", n), pods, func() {
		r := testenv.HTTPRoute(ns, "all", names[0], "all.scale.test", "/", "echo")
		r.Spec.ParentRefs = nil
		for _, name := range names {
			r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)})
		}
		rt.Create(t, r)
	}, "all.scale.test")
}

// readyPods waits until each Gateway has per Ready data-plane pods and
// returns them all.
func readyPods(t *testing.T, ns string, gateways []string, per int) []corev1.Pod {
	t.Helper()
	var all []corev1.Pod
	for _, gw := range gateways {
		rt.ProgrammedAddress(t, types.NamespacedName{Namespace: ns, Name: gw}, 5*time.Minute)
		testenv.Eventually(t, 5*time.Minute, func() error {
			pods, err := rt.RunningPods(context.Background(), ns, map[string]string{provisioner.GatewayNameLabel: gw})
			if err != nil {
				return err
			}
			var ready []corev1.Pod
			for _, p := range pods {
				if testenv.Ready(p) && p.DeletionTimestamp == nil {
					ready = append(ready, p)
				}
			}
			if len(ready) != per {
				return fmt.Errorf("Gateway %s has %d Ready data-plane pods, want %d", gw, len(ready), per)
			}
			all = append(all, ready...)
			return nil
		})
	}
	return all
}

// fanOut measures the manager at rest with the pods' agents connected,
// makes the change, and times each pod serving host.
func fanOut(t *testing.T, what string, pods []corev1.Pod, change func(), host string) {
	mgr, pid := managerPod(t)
	_, cpu0 := testenv.ProcessTimes(pid)
	time.Sleep(10 * time.Second)
	_, cpu1 := testenv.ProcessTimes(pid)
	idle := cpuShare(cpu0, cpu1, 10*time.Second)
	heap := metrics(t, mgr, "go_memstats_heap_inuse_bytes")["go_memstats_heap_inuse_bytes"]

	node := nodeCPUSince()
	start := time.Now()
	change()
	served := make([]time.Duration, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, err := reaches(net.JoinHostPort(p.Status.PodIP, "80"), host, servedByEcho, 2*time.Minute)
			if err != nil {
				t.Errorf("pod %s: %v", p.Name, err)
				return
			}
			served[i] = at.Sub(start)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	wall := time.Since(start)
	nodeShares := node()
	_, cpu2 := testenv.ProcessTimes(pid)
	first, last := percentile(served, 0), percentile(served, 1)
	t.Logf("%s: served after %v; manager at rest %s, during the change %s; RSS %s, Go heap %s",
		what, served, idle, cpuShare(cpu1, cpu2, wall), mib(rss(t, pid)), mib(int64(heap)))
	report.add("fan-out to "+what+": first / last pod serving a change", fmt.Sprintf("%s / %s (spread %s)", ms(first), ms(last), ms(last-first)),
		"all within 2 s of the first")
	report.add("  manager with their agents connected: CPU at rest, during the change; RSS",
		fmt.Sprintf("%s, %s; %s", idle, cpuShare(cpu1, cpu2, wall), mib(rss(t, pid))), "")
	t.Logf("node CPU from the change to the last pod serving it: %s", nodeShares)
	report.add("  node CPU from the change to the last pod serving it, cores by command", nodeShares, "")
}
