package config

import "strings"

// Tracing (NginxProxy telemetry) without an OpenTelemetry module, which
// Debian's NGINX 1.22 lacks: W3C trace context is propagated and logged,
// and spans are not exported (the statuses say so).
//
// A request's traceparent header (version-traceid-parentid-flags) is
// valid when it is lower-case hex of the right lengths, its version is not
// ff, its trace and parent IDs are not all zeros, and a version 00 header
// has nothing after its flags. A valid one reaches the backend unchanged,
// with its tracestate, as the W3C recommendation asks of a proxy that
// records no span of its own. A request without a valid one gets one
// made from NGINX's $request_id (16 bytes of OpenSSL's random generator,
// as 32 hex digits): the trace ID is $request_id, the parent ID its first
// 16 digits (the span the backend's is a child of, which is never
// exported), flags 01 (sampled: the backend records the trace, whose
// root the access log holds); any tracestate goes with the invalid header.
//
// The access log reads NGINX's OpenTelemetry module's variables, which
// these maps define: $otel_trace_id, $otel_parent_id (the client's parent
// ID, "" without one), $otel_span_id (the parent ID the backend gets: the
// client's, or the one made here) and $otel_parent_sampled ("1" when the
// client's flags say sampled).

// traceparentIn reads a request's traceparent, in order: all-zero IDs and
// version ff are invalid, a version 00 header is its four fields exactly,
// a later version may have more; the valid part is captured as $gw_tp,
// "" when the header is invalid or absent. (No lookahead: RE2, which
// checks the configuration in tests, has none.)
var traceparentIn = []MapEntry{
	{Key: Quote(`~^[0-9a-f]{2}-0{32}-`), Value: `""`},
	{Key: Quote(`~^[0-9a-f]{2}-[0-9a-f]{32}-0{16}-`), Value: `""`},
	{Key: Quote(`~^ff-`), Value: `""`},
	{Key: Quote(`~^(?<gw_tp>00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})$`), Value: "$gw_tp"},
	{Key: Quote(`~^00-`), Value: `""`},
	{Key: Quote(`~^(?<gw_tp>[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})(-|$)`), Value: "$gw_tp"},
}

// tracingMaps are the maps of tracing: the variables above, and the
// traceparent and tracestate sent to backends.
func tracingMaps() []*Map {
	const in = "$gw_traceparent_in"
	ids := Quote(`~^[0-9a-f]{2}-(?<gw_tid>[0-9a-f]{32})-(?<gw_pid>[0-9a-f]{16})-`)
	maps := []*Map{
		{Source: "$http_traceparent", Variable: in, Default: `""`, Entries: traceparentIn},
		// $request_id is never all zeros but once in 2^128 requests; a
		// trace ID must not be.
		{Source: "$request_id", Variable: "$gw_trace_new", Default: "$request_id", Entries: []MapEntry{
			{Key: Quote("~^0{32}$"), Value: Quote("00000000000000000000000000000001")},
		}},
		{Source: "$request_id", Variable: "$gw_span_new", Default: "$request_id", Entries: []MapEntry{
			{Key: Quote("~^0{16}"), Value: Quote("0000000000000001")},
			{Key: Quote("~^(?<gw_sp>[0-9a-f]{16})"), Value: "$gw_sp"},
		}},
		{Source: in, Variable: "$otel_trace_id", Default: "$gw_trace_new", Entries: []MapEntry{{Key: ids, Value: "$gw_tid"}}},
		{Source: in, Variable: "$otel_parent_id", Default: `""`, Entries: []MapEntry{{Key: ids, Value: "$gw_pid"}}},
		{Source: in, Variable: "$otel_span_id", Default: "$gw_span_new", Entries: []MapEntry{{Key: ids, Value: "$gw_pid"}}},
		{Source: in, Variable: "$otel_parent_sampled", Default: "0", Entries: []MapEntry{{Key: Quote("~-[0-9a-f][13579bdf]$"), Value: "1"}}},
		{Source: in, Variable: "$gw_traceparent_out", Default: "$http_traceparent", Entries: []MapEntry{
			{Key: `""`, Value: Quote("00-${gw_trace_new}-${gw_span_new}-01")},
		}},
		{Source: in, Variable: "$gw_tracestate_out", Default: "$http_tracestate", Entries: []MapEntry{{Key: `""`, Value: `""`}}},
	}
	return maps
}

// emptyTraceMaps define the trace variables as "" for an access log
// format that reads them while tracing is off (NGINX refuses a format
// naming a variable it does not have).
func emptyTraceMaps() []*Map {
	var out []*Map
	for _, v := range []string{"$otel_parent_id", "$otel_parent_sampled", "$otel_span_id", "$otel_trace_id"} {
		out = append(out, &Map{Source: "$request_id", Variable: v, Default: `""`})
	}
	return out
}

// traceMaps are the maps the configuration's tracing needs, if any.
func (c *Config) traceMaps() []*Map {
	switch {
	case c.Main.Proxy.Tracing:
		return tracingMaps()
	case c.Main.Proxy.AccessLog.readsTrace():
		return emptyTraceMaps()
	}
	return nil
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// readsTrace says whether the access log's format reads a trace variable.
func (a AccessLog) readsTrace() bool {
	for _, p := range a.Format {
		if containsAny(p, "${otel_trace_id}", "${otel_span_id}", "${otel_parent_id}", "${otel_parent_sampled}") {
			return true
		}
	}
	return false
}

// traceHeaders are the trace context headers every request passed with
// prefix ("proxy", "grpc") carries when tracing is on.
func (p ProxySettings) traceHeaders(prefix string) []Directive {
	if !p.Tracing {
		return nil
	}
	return []Directive{
		D(prefix+"_set_header", "traceparent", "$gw_traceparent_out"),
		D(prefix+"_set_header", "tracestate", "$gw_tracestate_out"),
	}
}
