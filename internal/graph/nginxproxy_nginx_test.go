package graph

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// classNginx sets every NGINX-facing field NGINX Gateway Fabric has.
func classNginx() *v1alpha2.NginxProxySpec {
	pp := v1alpha2.RewriteClientIPModeProxyProtocol
	return &v1alpha2.NginxProxySpec{
		RewriteClientIP: &v1alpha2.RewriteClientIP{Mode: &pp, SetIPRecursively: ptr.To(true),
			TrustedAddresses: []v1alpha2.RewriteClientIPAddress{{Type: "CIDR", Value: "10.0.0.0/8"}}},
		Logging: &v1alpha2.NginxLogging{ErrorLevel: ptr.To(v1alpha2.NginxErrorLevel("warn")),
			AccessLog: &v1alpha2.NginxAccessLog{Format: ptr.To("$remote_addr $status"), Escape: ptr.To(v1alpha2.NginxAccessLogEscapeJSON)}},
		DisableHTTP2: ptr.To(true), UseClusterIP: ptr.To(true), DisableSNIHostValidation: ptr.To(true),
		WorkerProcesses: ptr.To(int32(4)), WorkerRlimitNofile: ptr.To(int32(4096)), ServerTokens: ptr.To("on"),
		ZoneSize:           ptr.To(v1alpha1.ByteSize("512k")),
		DisableBaseHeaders: []v1alpha2.BaseHeaderName{v1alpha2.HeaderXRealIP},
		Compression: &v1alpha2.Compression{Type: v1alpha2.GzipCompressionType, Level: ptr.To(int32(5)), MimeTypes: []string{"text/css"},
			Gzip: &v1alpha2.GzipSettings{Vary: ptr.To(true), Proxied: []v1alpha2.GzipProxiedType{"any"}}},
		Telemetry: &v1alpha2.Telemetry{ServiceName: ptr.To("class"),
			Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr.To("collector:4317"), BatchSize: ptr.To(int32(10))}},
		AllowGatewayOverrides: &v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{
			v1alpha2.OverrideRewriteClientIP, v1alpha2.OverrideDisableBaseHeaders}},
	}
}

// TestNginxFieldsOverlay: a Gateway's NginxProxy overlays its class's
// NGINX-facing fields one by one (structs field by field, lists whole),
// and what it leaves unset stays the class's.
func TestNginxFieldsOverlay(t *testing.T) {
	gateway := &v1alpha2.NginxProxySpec{
		RewriteClientIP: &v1alpha2.RewriteClientIP{SetIPRecursively: ptr.To(false)},
		Logging:         &v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{Disable: ptr.To(true)}, ErrorLogFormat: ptr.To(v1alpha2.NginxErrorLogFormatJSON)},
		DisableHTTP2:    ptr.To(false), WorkerProcesses: ptr.To(int32(8)),
		DisableBaseHeaders: []v1alpha2.BaseHeaderName{},
		Compression: &v1alpha2.Compression{Type: v1alpha2.GzipCompressionType, MinLength: ptr.To(int32(1000)),
			Gzip: &v1alpha2.GzipSettings{HTTPVersion: ptr.To(v1alpha2.GzipHTTPVersion("1.0")), Disable: []string{"msie6"}}},
		Telemetry: &v1alpha2.Telemetry{DisabledFeatures: []v1alpha2.DisableTelemetryFeature{v1alpha2.DisableTracing},
			Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr.To("gw-collector:4317")}},
	}
	g := Build(overlayInput(classNginx(), gateway), key("default", "gw"))
	if !g.Valid {
		t.Fatalf("Gateway not accepted: %+v", g.Conditions)
	}
	eff := g.NginxProxy
	want := classNginx()
	want.RewriteClientIP.SetIPRecursively = ptr.To(false)
	want.Logging.AccessLog.Disable = ptr.To(true)
	want.Logging.ErrorLogFormat = ptr.To(v1alpha2.NginxErrorLogFormatJSON)
	want.DisableHTTP2, want.WorkerProcesses = ptr.To(false), ptr.To(int32(8))
	want.DisableBaseHeaders = []v1alpha2.BaseHeaderName{}
	want.Compression.MinLength = ptr.To(int32(1000))
	want.Compression.Gzip.HTTPVersion = ptr.To(v1alpha2.GzipHTTPVersion("1.0"))
	want.Compression.Gzip.Disable = []string{"msie6"}
	want.Telemetry.DisabledFeatures = []v1alpha2.DisableTelemetryFeature{v1alpha2.DisableTracing}
	want.Telemetry.Exporter.Endpoint = ptr.To("gw-collector:4317")
	for name, pair := range map[string][2]any{
		"rewriteClientIP":          {eff.RewriteClientIP, want.RewriteClientIP},
		"logging":                  {eff.Logging, want.Logging},
		"disableHTTP2":             {eff.DisableHTTP2, want.DisableHTTP2},
		"useClusterIP":             {eff.UseClusterIP, want.UseClusterIP},
		"disableSNIHostValidation": {eff.DisableSNIHostValidation, want.DisableSNIHostValidation},
		"workerProcesses":          {eff.WorkerProcesses, want.WorkerProcesses},
		"workerRlimitNofile":       {eff.WorkerRlimitNofile, want.WorkerRlimitNofile},
		"serverTokens":             {eff.ServerTokens, want.ServerTokens},
		"zoneSize":                 {eff.ZoneSize, want.ZoneSize},
		"disableBaseHeaders":       {eff.DisableBaseHeaders, want.DisableBaseHeaders},
		"compression":              {eff.Compression, want.Compression},
		"telemetry":                {eff.Telemetry, want.Telemetry},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: got %+v, want %+v", name, pair[0], pair[1])
		}
	}
	if eff.TracingOn() {
		t.Error("tracing is on although the Gateway disabled it")
	}
}

// TestClientAddressOverrides: whose word about a client's address routes'
// backends, logs and rate limits take is the class's to give: a Gateway's
// NginxProxy that trusts every peer, or lets clients' own X-Forwarded-For
// through, is left out unless its class allows it, and the Gateway's
// Accepted message says so.
func TestClientAddressOverrides(t *testing.T) {
	xff := v1alpha2.RewriteClientIPModeXForwardedFor
	everyone := []v1alpha2.RewriteClientIPAddress{{Type: "CIDR", Value: "0.0.0.0/0"}}
	gateway := &v1alpha2.NginxProxySpec{
		RewriteClientIP:    &v1alpha2.RewriteClientIP{Mode: &xff, TrustedAddresses: everyone},
		DisableBaseHeaders: []v1alpha2.BaseHeaderName{v1alpha2.AllBaseHeaders},
		Compression:        &v1alpha2.Compression{Type: v1alpha2.GzipCompressionType, Gzip: &v1alpha2.GzipSettings{}},
	}
	class := func(fields ...v1alpha2.GatewayOverrideField) *v1alpha2.NginxProxySpec {
		s := &v1alpha2.NginxProxySpec{}
		if fields != nil {
			s.AllowGatewayOverrides = &v1alpha2.GatewayOverrides{Fields: fields}
		}
		return s
	}
	for _, c := range []struct {
		name                 string
		class                *v1alpha2.NginxProxySpec
		wantTrust, wantUnset bool
		wantMessage          string
	}{
		{"class allows nothing", class(), false, false, "sets rewriteClientIP, disableBaseHeaders, which only the GatewayClass's NginxProxy"},
		{"no class NginxProxy", nil, false, false, "sets rewriteClientIP, disableBaseHeaders, which only"},
		{"class allows RewriteClientIP", class(v1alpha2.OverrideRewriteClientIP), true, false, "sets disableBaseHeaders, which only"},
		{"class allows DisableBaseHeaders", class(v1alpha2.OverrideDisableBaseHeaders), false, true, "sets rewriteClientIP, which only"},
		{"class allows both", class(v1alpha2.OverrideRewriteClientIP, v1alpha2.OverrideDisableBaseHeaders), true, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := Build(overlayInput(c.class, gateway.DeepCopy()), key("default", "gw"))
			accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if accepted == nil || accepted.Status != metav1.ConditionTrue || !g.Valid {
				t.Fatalf("Gateway not accepted: %+v", accepted)
			}
			if c.wantMessage == "" && strings.Contains(accepted.Message, "which only") || !strings.Contains(accepted.Message, c.wantMessage) {
				t.Errorf("Accepted message %q, want it to say %q", accepted.Message, c.wantMessage)
			}
			np := g.NginxProxy
			if got := np.RewriteClientIP != nil; got != c.wantTrust {
				t.Errorf("the Gateway's trusted addresses applied: %v, want %v", got, c.wantTrust)
			}
			if got := np.DisableBaseHeaders != nil; got != c.wantUnset {
				t.Errorf("the Gateway's disableBaseHeaders applied: %v, want %v", got, c.wantUnset)
			}
			if np.Compression == nil {
				t.Error("what any Gateway may set (compression) was dropped")
			}
		})
	}
}
