package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestDataPlaneMetrics: on the real node, a Gateway's data-plane pod runs
// with the metrics port and Prometheus' scrape annotations, and answers on
// that port, from the host, with NGINX's counts (Prometheus' text parser)
// labelled with its Gateway, the requests it served counted; a Gateway
// whose NginxProxy disables metrics has neither port nor annotations, and
// nothing answers there. The counters moving after requests (the agent
// collects once a minute) is tested in test/agent with the real agent and
// NGINX.
func TestDataPlaneMetrics(t *testing.T) {
	ns := namespace(t, "e2e-dp-metrics")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	quiet := gateway(ns, "quiet")
	quiet.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "no-metrics"}}
	create(t, &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-metrics"},
		Spec: v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Disable: ptr.To(true)}}})
	create(t, gateway(ns, "gw"), quiet,
		httpRoute(ns, "r", "gw", "counted.example.com", "/", "echo"), httpRoute(ns, "q", "quiet", "quiet.example.com", "/", "echo"))
	for _, gw := range []string{"gw", "quiet"} {
		addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: gw}, 120*time.Second)
		serves(t, addr, map[string]string{"gw": "counted.example.com", "quiet": "quiet.example.com"}[gw], "/", http.StatusOK, "", 60*time.Second)
	}
	port := strconv.Itoa(v1alpha2.DefaultMetricsPort)

	pod := dataPlanePod(t, ns, "gw")
	if a := pod.Annotations; a[provisioner.ScrapeAnnotation] != "true" || a[provisioner.ScrapePortAnnotation] != port {
		t.Errorf("pod %s annotations %v do not ask Prometheus to scrape port %s", pod.Name, a, port)
	}
	if !hasPort(pod, provisioner.MetricsPortName, port) {
		t.Errorf("pod %s has no port %s %s: %+v", pod.Name, provisioner.MetricsPortName, port, pod.Spec.Containers[0].Ports)
	}
	labels := map[string]string{agent.MetricLabelGatewayNamespace: ns, agent.MetricLabelGatewayName: "gw"}
	eventually(t, 150*time.Second, func() error {
		families, err := testenv.DataPlaneMetrics(net.JoinHostPort(pod.Status.PodIP, port))
		if err != nil {
			return err
		}
		for name, typ := range metrics.DataPlaneFamilies {
			if _, ok := testenv.Series(families, name, labels); !ok || families[name].GetType() != typ {
				return fmt.Errorf("no %s %s labelled %v", typ, name, labels)
			}
		}
		if v, _ := testenv.Series(families, "nginx_http_requests_total", labels); v < 1 {
			return fmt.Errorf("nginx_http_requests_total is %v; the route was served", v)
		}
		return nil
	})

	off := dataPlanePod(t, ns, "quiet")
	if _, ok := off.Annotations[provisioner.ScrapeAnnotation]; ok || hasPort(off, provisioner.MetricsPortName, port) {
		t.Errorf("metrics disabled, but pod %s has annotations %v, ports %+v", off.Name, off.Annotations, off.Spec.Containers[0].Ports)
	}
	if _, err := testenv.DataPlaneMetrics(net.JoinHostPort(off.Status.PodIP, port)); err == nil {
		t.Errorf("metrics disabled, but pod %s answers on %s", off.Name, port)
	}
	// What the collector costs: the agents' memory with and without it.
	t.Logf("nginx-agent RSS with metrics %s, without %s", agentRSS(t, pod), agentRSS(t, off))
}

// dataPlanePod is the running pod of a Gateway's data plane (one replica).
func dataPlanePod(t *testing.T, ns, gw string) corev1.Pod {
	t.Helper()
	pods, err := rt.RunningPods(context.Background(), ns, map[string]string{provisioner.GatewayNameLabel: gw})
	if err != nil || len(pods) != 1 {
		t.Fatalf("Gateway %s/%s's running data-plane pods: %d, %v", ns, gw, len(pods), err)
	}
	return pods[0]
}

func hasPort(pod corev1.Pod, name, port string) bool {
	for _, p := range pod.Spec.Containers[0].Ports {
		if p.Name == name && strconv.Itoa(int(p.ContainerPort)) == port {
			return true
		}
	}
	return false
}

// agentRSS is the resident memory of the pod's nginx-agent, read on the host.
func agentRSS(t *testing.T, pod corev1.Pod) string {
	rss, err := testenv.RSS(testenv.WaitProcess(t, pod, "/usr/bin/nginx-agent"))
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20))
}
