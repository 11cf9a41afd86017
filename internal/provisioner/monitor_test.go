package provisioner

import (
	"path/filepath"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/manifest"
)

// TestPodMonitorSelectsDataPlanes: config/prometheus's PodMonitor selects
// the pods the provisioner makes, on the port their metrics are served on.
func TestPodMonitorSelectsDataPlanes(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	objs, err := manifest.Kustomize(filepath.Join(filepath.Dir(file), "..", "..", "config", "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	var monitor *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "PodMonitor" {
			monitor = o
		}
	}
	if monitor == nil {
		t.Fatal("config/prometheus has no PodMonitor")
	}
	pod := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{})).Spec.Template
	match, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	if len(match) == 0 {
		t.Fatal("the PodMonitor selects every pod")
	}
	for k, v := range match {
		if pod.Labels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s; the data-plane pods have %v", k, v, pod.Labels)
		}
	}
	if any, _, _ := unstructured.NestedBool(monitor.Object, "spec", "namespaceSelector", "any"); !any {
		t.Error("the PodMonitor must look in every namespace: Gateways are anywhere")
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "podMetricsEndpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != MetricsPortName {
		t.Errorf("the PodMonitor scrapes %v, want the port %s", endpoints, MetricsPortName)
	}
}
