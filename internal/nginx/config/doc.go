// Package config renders the NGINX configuration of one Gateway from its
// graph: nginx.conf, the http-level maps and upstreams, the servers and their
// locations, and the TLS material, as files with absolute data-plane paths.
//
// It is pure and deterministic: the same graph gives the same bytes, so an
// unchanged configuration is never pushed or reloaded. Every user value that
// reaches a file has passed an allow-list in package validation and is
// written with Quote; a header value, where NGINX interpolates variables,
// first with syntax.HeaderValue (allow-listed variables read, any other
// '$' the literal ${gw_dollar}, which http.conf then declares), and an
// access log format likewise with syntax.LogFormat. The NginxProxy's
// NGINX-facing settings are read in nginxproxy.go, realip.go (the
// client's address) and tracing.go (W3C trace context); what of them the
// data plane does not carry out is left at Gatewall's default there and
// named in statuses (graph.NotProgrammed).
//
// The configuration shape is chosen for NGINX's own cost, which dominates:
// one upstream per Service port however many routes use it, no shared memory
// zones unless a feature needs one, http-level defaults instead of per-server
// repetition, and regex-keyed maps (evaluated lazily) instead of per-request
// scripting for header, query and method matches.
package config
