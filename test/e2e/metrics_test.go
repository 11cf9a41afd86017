package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestManagerMetrics: the manager serves its metrics over HTTPS to tokens
// the API server authorizes only (401 without one, 403 for a ServiceAccount
// not bound to the metrics-reader role), and Gatewall's own families are
// there with their types and labels (read with Prometheus' text parser);
// a route change moves the translation, push and apply series of its
// Gateway; an apply the data plane fails (a real reload failure) is counted
// as failed with an ApplyFailed event on the Gateway, and the next good
// one as applied with ApplyRecovered.
func TestManagerMetrics(t *testing.T) {
	ns := namespace(t, "e2e-metrics")
	gatewayClass(t)
	create(t, echo(ns, "echo", 1)...)
	refused := httpRoute(ns, "refused", "gw", "refused.example.com", "/", "echo")
	refused.Spec.ParentRefs[0].SectionName = ptr.To[gatewayv1.SectionName]("no-such-listener")
	create(t, gateway(ns, "gw"), httpRoute(ns, "r", "gw", "metrics.example.com", "/", "echo"), refused)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	addr := programmedAddress(t, gw, 120*time.Second)
	serves(t, addr, "metrics.example.com", "/", http.StatusOK, "", 60*time.Second)
	pod := rt.LeaderPod(t)

	t.Run("metrics need an authorized token", func(t *testing.T) {
		if code, body, err := testenv.ScrapeMetrics(pod, ""); err != nil || code != http.StatusUnauthorized {
			t.Errorf("without a token: %d %v %.100s, want 401", code, err, body)
		}
		stranger := rt.MetricsToken(t, "e2e-metrics-stranger", false)
		if code, body, err := testenv.ScrapeMetrics(pod, stranger); err != nil || code != http.StatusForbidden {
			t.Errorf("a ServiceAccount not bound to %s: %d %v %.100s, want 403", testenv.MetricsReaderRole, code, err, body)
		}
	})

	token := rt.MetricsToken(t, "e2e-metrics-reader", true)
	labels := []string{"namespace", "gateway"}
	families := []struct {
		name   string
		typ    dto.MetricType
		labels []string
	}{
		{"gatewall_translation_duration_seconds", dto.MetricType_HISTOGRAM, labels},
		{"gatewall_configuration_bytes", dto.MetricType_GAUGE, labels},
		{"gatewall_configuration_files", dto.MetricType_GAUGE, labels},
		{"gatewall_pushes_total", dto.MetricType_COUNTER, labels},
		{"gatewall_applies_total", dto.MetricType_COUNTER, append(labels, "result")},
		{"gatewall_apply_duration_seconds", dto.MetricType_HISTOGRAM, labels},
		{"gatewall_agents_connected", dto.MetricType_GAUGE, labels},
		{"gatewall_agent_resyncs_total", dto.MetricType_COUNTER, labels},
		{"gatewall_status_writes_total", dto.MetricType_COUNTER, []string{"kind", "result"}},
		{"gatewall_refused_objects", dto.MetricType_GAUGE, append(labels, "kind", "reason")},
	}
	var before map[string]*dto.MetricFamily
	t.Run("every family, its type and labels", func(t *testing.T) {
		// The apply's answer comes after the first 200 (the agent's reload
		// monitoring): wait for it.
		eventually(t, 30*time.Second, func() error {
			before = testenv.ManagerMetrics(t, pod, token)
			return atLeast(before, "gatewall_applies_total", gw, map[string]string{"result": "applied"}, 1)
		})
		for _, f := range families {
			got := before[f.name]
			if got == nil {
				t.Errorf("no family %s", f.name)
				continue
			}
			if got.GetType() != f.typ {
				t.Errorf("%s is a %s, want %s", f.name, got.GetType(), f.typ)
			}
			for _, m := range got.GetMetric() {
				if names := labelNames(m); !slices.Equal(names, slices.Sorted(slices.Values(f.labels))) {
					t.Errorf("%s has labels %v, want %v", f.name, names, f.labels)
					break
				}
			}
		}
		for _, c := range []struct {
			name  string
			extra map[string]string
			min   float64
		}{
			{"gatewall_translation_duration_seconds", nil, 1},
			{"gatewall_configuration_bytes", nil, 100},
			{"gatewall_configuration_files", nil, 4},
			{"gatewall_pushes_total", nil, 1},
			{"gatewall_apply_duration_seconds", nil, 1},
			{"gatewall_agents_connected", nil, 1},
			{"gatewall_agent_resyncs_total", nil, 1},
		} {
			if err := atLeast(before, c.name, gw, c.extra, c.min); err != nil {
				t.Error(err)
			}
		}
		// The Go runtime's soft memory limit is 90% of the container's.
		limit := pod.Spec.Containers[0].Resources.Limits.Memory().Value()
		if got, want := testenv.Gauge(t, before, "go_gc_gomemlimit_bytes"), float64(int64(float64(limit)*0.9)); limit == 0 || got != want {
			t.Errorf("go_gc_gomemlimit_bytes %v, want 90%% of the manager container's limit %d: %v", got, limit, want)
		}
		if err := atLeast(before, "gatewall_refused_objects", gw, map[string]string{"kind": "HTTPRoute", "reason": "NoMatchingParent"}, 1); err != nil {
			t.Error(err)
		}
		if v := value(before["gatewall_status_writes_total"], map[string]string{"kind": "Gateway", "result": "written"}); v < 1 {
			t.Errorf("gatewall_status_writes_total{kind=Gateway,result=written} is %v, want at least 1", v)
		}
	})

	t.Run("a route change moves its Gateway's series", func(t *testing.T) {
		if before == nil {
			t.Skip("the families were not read")
		}
		route := &gatewayv1.HTTPRoute{}
		if err := rt.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "r"}, route); err != nil {
			t.Fatal(err)
		}
		route.Spec.Hostnames = append(route.Spec.Hostnames, "metrics2.example.com")
		if err := rt.Client.Update(context.Background(), route); err != nil {
			t.Fatal(err)
		}
		serves(t, addr, "metrics2.example.com", "/", http.StatusOK, "", 60*time.Second)
		applied := map[string]string{"result": "applied"}
		eventually(t, 30*time.Second, func() error {
			after := testenv.ManagerMetrics(t, pod, token)
			for _, c := range []struct {
				name  string
				extra map[string]string
			}{
				{"gatewall_translation_duration_seconds", nil},
				{"gatewall_pushes_total", nil},
				{"gatewall_applies_total", applied},
				{"gatewall_apply_duration_seconds", nil},
			} {
				was := value(before[c.name], withGateway(gw, c.extra))
				if err := atLeast(after, c.name, gw, c.extra, was+1); err != nil {
					return err
				}
			}
			return nil
		})
	})

	t.Run("a failed apply is counted and reported, then its recovery", func(t *testing.T) {
		if before == nil {
			t.Skip("the families were not read")
		}
		// applyCounted waits for one more apply of result than since has, and
		// an event of reason on the Gateway.
		applyCounted := func(since map[string]*dto.MetricFamily, result, reason string) {
			extra := map[string]string{"result": result}
			eventually(t, 60*time.Second, func() error {
				if err := atLeast(testenv.ManagerMetrics(t, pod, token), "gatewall_applies_total", gw, extra, value(since["gatewall_applies_total"], withGateway(gw, extra))+1); err != nil {
					return err
				}
				if evs, err := testenv.EventsAbout(rt.Client, gw, reason); err != nil || len(evs) == 0 {
					return fmt.Errorf("no %s event on the Gateway (%v)", reason, err)
				}
				return nil
			})
		}
		undo := failedApply(t, gw)
		applyCounted(before, "failed", "ApplyFailed")
		// NGINX kept its last good configuration.
		serves(t, addr, "metrics2.example.com", "/", http.StatusOK, "", 10*time.Second)
		mid := testenv.ManagerMetrics(t, pod, token)
		undo()
		applyCounted(mid, "applied", "ApplyRecovered")
	})
}

// failedApply makes the next configuration of Gateway gw fail on its data
// plane the way a real fault does: the sink socket a split with a missing
// backend needs (config's sink-500.sock) is taken, in the pod, by a
// directory NGINX cannot remove, so its reload cannot bind it and nginx-agent
// puts the last good configuration back. It creates that split route and
// returns a function that removes the directory and the route.
func failedApply(t *testing.T, gw types.NamespacedName) func() {
	t.Helper()
	pid := testenv.WaitProcess(t, dataPlanePod(t, gw.Namespace, gw.Name), "nginx: master")
	root := filepath.Join("/proc", strconv.Itoa(pid), "root")
	run := config.RunDir
	// /var/run is a link to /run in the image: absolute, so it is read
	// here in the pod's root, not the host's.
	if to, err := os.Readlink(filepath.Join(root, "/var/run")); err == nil && filepath.IsAbs(to) {
		run = filepath.Join(to, strings.TrimPrefix(config.RunDir, "/var/run/"))
	}
	dir := filepath.Join(root, run, "sink-500.sock")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	split := httpRoute(gw.Namespace, "split", gw.Name, "split.example.com", "/", "echo")
	split.Spec.Rules[0].BackendRefs = append(split.Spec.Rules[0].BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "no-such-service", Port: ptr.To[gatewayv1.PortNumber](8080)}}})
	create(t, split)
	return func() {
		if err := os.Remove(dir); err != nil {
			t.Error(err)
		}
		if err := rt.Client.Delete(context.Background(), split); err != nil {
			t.Error(err)
		}
	}
}

// atLeast checks that the series of family name for Gateway gw (and the
// extra labels) is at least min: a gauge's or counter's value, a
// histogram's count.
func atLeast(families map[string]*dto.MetricFamily, name string, gw types.NamespacedName, extra map[string]string, min float64) error {
	if v := value(families[name], withGateway(gw, extra)); v < min {
		return fmt.Errorf("%s%v is %v, want at least %v", name, withGateway(gw, extra), v, min)
	}
	return nil
}

func withGateway(gw types.NamespacedName, extra map[string]string) map[string]string {
	out := map[string]string{"namespace": gw.Namespace, "gateway": gw.Name}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// value is the series of f whose labels include want (testenv.Series); 0
// when there is none.
func value(f *dto.MetricFamily, want map[string]string) float64 {
	v, _ := testenv.Series(map[string]*dto.MetricFamily{f.GetName(): f}, f.GetName(), want)
	return v
}

// labelNames are a series' label names, sorted.
func labelNames(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName())
	}
	slices.Sort(out)
	return out
}
