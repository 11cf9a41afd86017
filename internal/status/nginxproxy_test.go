package status

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
)

func TestNginxProxyStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	np := func(mod func(*v1alpha2.NginxProxy)) *v1alpha2.NginxProxy {
		p := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 3}}
		mod(p)
		return p
	}
	for _, c := range []struct {
		name           string
		np             *v1alpha2.NginxProxy
		status, reason string
		message        string
	}{
		{"valid", np(func(*v1alpha2.NginxProxy) {}), "True", "Accepted", "NginxProxy is accepted"},
		// The API server would refuse it; Go re-validates what bypassed it.
		{"invalid", np(func(p *v1alpha2.NginxProxy) { p.Spec.WorkerConnections = ptr.To[int32](-1) }), "False", "Invalid", "workerConnections"},
		{"unreadable", np(func(p *v1alpha2.NginxProxy) {
			p.Annotations = map[string]string{graph.UnreadableAnnotation: "spec.l4: expected an object"}
		}), "False", "Invalid", "spec.l4: expected an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NginxProxy(c.np, v1alpha2.NginxProxyStatus{}, t0)
			if len(got.Conditions) != 1 {
				t.Fatalf("conditions %+v, want Accepted alone", got.Conditions)
			}
			a := got.Conditions[0]
			if a.Type != "Accepted" || string(a.Status) != c.status || a.Reason != c.reason || !strings.Contains(a.Message, c.message) || a.ObservedGeneration != 3 || !a.LastTransitionTime.Equal(&t0) {
				t.Fatalf("Accepted %+v, want %s/%s naming %q at generation 3, %v", a, c.status, c.reason, c.message, t0)
			}
			// The same verdict later keeps its transition time; a change
			// takes the new one.
			if again := NginxProxy(c.np, got, t1).Conditions[0]; !again.LastTransitionTime.Equal(&t0) {
				t.Errorf("unchanged verdict moved its transition time to %v", again.LastTransitionTime)
			}
			other := np(func(*v1alpha2.NginxProxy) {})
			if c.status == "True" {
				other.Spec.WorkerConnections = ptr.To[int32](-1)
			}
			if changed := NginxProxy(other, got, t1).Conditions[0]; !changed.LastTransitionTime.Equal(&t1) {
				t.Errorf("changed verdict kept transition time %v, want %v", changed.LastTransitionTime, t1)
			}
		})
	}
}

// TestNginxProxyNotProgrammed: an NginxProxy is accepted or refused by its
// rules; an accepted one with settings the data plane does not carry out
// (NGINX Plus's, or what Debian's NGINX has no module for) says which in
// Programmed=False, PartiallyInvalid, field by field, and a change that
// removes them removes the condition.
func TestNginxProxyNotProgrammed(t *testing.T) {
	now := metav1.Now()
	np := func(mutate func(*v1alpha2.NginxProxySpec)) *v1alpha2.NginxProxy {
		p := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "np", Generation: 3}}
		mutate(&p.Spec)
		return p
	}
	for _, c := range []struct {
		name         string
		np           *v1alpha2.NginxProxy
		accepted     metav1.ConditionStatus
		notProgramed []string // each in Programmed's message; nil: no Programmed condition
	}{
		{"plain", np(func(s *v1alpha2.NginxProxySpec) { s.WorkerConnections = ptr.To(int32(2048)) }), metav1.ConditionTrue, nil},
		{"invalid", np(func(s *v1alpha2.NginxProxySpec) { s.WorkerProcesses = ptr.To(int32(0)) }), metav1.ConditionFalse, nil},
		{"every OSS value", np(func(s *v1alpha2.NginxProxySpec) {
			s.ServerTokens = ptr.To("build")
			s.Telemetry = &v1alpha2.Telemetry{DisabledFeatures: []v1alpha2.DisableTelemetryFeature{v1alpha2.DisableTracing},
				Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr.To("collector:4317")}}
		}), metav1.ConditionTrue, nil},
		{"NGINX Plus's and what Debian lacks", np(func(s *v1alpha2.NginxProxySpec) {
			s.ServerTokens = ptr.To("my-server")
			s.ZoneSize = ptr.To(v1alpha1.ByteSize("512k"))
			s.Telemetry = &v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr.To("collector:4317")},
				SpanAttributes: []v1alpha1.SpanAttribute{{Key: "k", Value: "v"}}}
			s.Logging = &v1alpha2.NginxLogging{ErrorLogFormat: ptr.To(v1alpha2.NginxErrorLogFormatJSON),
				AccessLog: &v1alpha2.NginxAccessLog{Format: ptr.To("$remote_addr $http_authorization $cookie_session")}}
			s.RewriteClientIP = &v1alpha2.RewriteClientIP{Mode: ptr.To(v1alpha2.RewriteClientIPModeProxyProtocol),
				TrustedAddresses: []v1alpha2.RewriteClientIPAddress{{Type: "Hostname", Value: "lb.example.com"}}}
		}), metav1.ConditionTrue, []string{
			"telemetry.{exporter, spanAttributes}: spans are not exported",
			"logging.errorLogFormat json",
			`logging.accessLog.format: "$cookie_session", "$http_authorization" written as text`,
			`serverTokens "my-server"`,
			"zoneSize:",
			"rewriteClientIP.trustedAddresses lb.example.com: not trusted",
		}},
		{"unreadable", func() *v1alpha2.NginxProxy {
			p := np(func(*v1alpha2.NginxProxySpec) {})
			p.Annotations = map[string]string{graph.UnreadableAnnotation: "spec.workerConnections: not a number"}
			return p
		}(), metav1.ConditionFalse, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := v1alpha2.NginxProxyStatus{Conditions: []metav1.Condition{{Type: NginxProxyProgrammed, Status: metav1.ConditionFalse, Reason: "PartiallyInvalid", Message: "stale"}}}
			got := NginxProxy(c.np, old, now).Conditions
			a := meta.FindStatusCondition(got, NginxProxyAccepted)
			if a == nil || a.Status != c.accepted || a.ObservedGeneration != 3 {
				t.Fatalf("Accepted: %+v, want %s", a, c.accepted)
			}
			p := meta.FindStatusCondition(got, NginxProxyProgrammed)
			if c.notProgramed == nil {
				if p != nil {
					t.Fatalf("Programmed: %+v, want none", p)
				}
				return
			}
			if p == nil || p.Status != metav1.ConditionFalse || p.Reason != v1alpha1.PolicyReasonPartiallyInvalid {
				t.Fatalf("Programmed: %+v, want False/PartiallyInvalid", p)
			}
			for _, want := range c.notProgramed {
				if !strings.Contains(p.Message, want) {
					t.Errorf("Programmed message %q does not contain %q", p.Message, want)
				}
			}
		})
	}
}

// TestGatewayNamesWhatIsNotProgrammed: a valid Gateway's Programmed
// condition names what of its effective NginxProxy the data plane does
// not carry out, applied or pending; a refused Gateway's does not.
func TestGatewayNamesWhatIsNotProgrammed(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw", Generation: 1}}
	notes := []string{"telemetry.exporter: spans are not exported"}
	for _, c := range []struct {
		name  string
		valid bool
		dp    DataPlane
		want  bool
	}{
		{"applied", true, DataPlane{State: Applied}, true},
		{"pending", true, DataPlane{State: Pending}, true},
		{"refused by the data plane", true, DataPlane{State: Failed, Message: "nginx -t failed"}, false},
		{"not accepted", false, DataPlane{State: Applied}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &graph.Gateway{Source: gw, Valid: c.valid, NotProgrammed: notes}
			st := Gateway(g, c.dp, nil, nil, nil, gatewayv1.GatewayStatus{}, metav1.Now())
			p := meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionProgrammed))
			if p == nil {
				t.Fatal("no Programmed condition")
			}
			if got := strings.Contains(p.Message, "programmed but: "+notes[0]); got != c.want {
				t.Errorf("message %q names the note: %v, want %v", p.Message, got, c.want)
			}
		})
	}
}
