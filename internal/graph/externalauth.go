package graph

import (
	"errors"
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/validation"
)

// ExternalAuth asks an HTTP authorization service about each request of a
// rule before it is served (the Gateway API's ExternalAuth filter with
// protocol HTTP; NGINX's auth_request): a 2xx answer lets the request
// through, 401 and 403 are the client's answer, anything else (the service
// down, refusing, slow) is 500.
type ExternalAuth struct {
	// Backend is the authorization service: a Service port, resolved as
	// a backendRef is. An invalid one leaves the rule answering 500.
	Backend *Backend
	// PathPrefix is put before the request's URI in the authorization
	// request ("" for none); it has no trailing '/'.
	PathPrefix string
	// RequestHeaders are the client's headers sent to the service beside
	// the ones always sent (Host, Authorization, the body's length), in
	// the filter's order, each once.
	RequestHeaders []string
	// ResponseHeaders are the headers of the service's answer copied into
	// the request to the backend, in the filter's order, each once: a
	// header the answer lacks is removed from the request, so a client
	// cannot send one in the service's name.
	ResponseHeaders []string
	// MaxBodySize is how much of the request body is sent to the service
	// (bytes); 0 sends none. A larger body is refused (413), as the
	// Gateway API asks.
	MaxBodySize int

	// reason is why Backend does not resolve, for ResolvedRefs.
	reason gatewayv1.RouteConditionReason
}

// maxExternalAuthHeaders is the Gateway API's limit on each header list.
const maxExternalAuthHeaders = 64

// alwaysSentHeaders are the request headers the authorization request
// always has, whatever allowedHeaders says (the Gateway API's Host and
// Authorization; Content-Length is the forwarded body's), and the loop
// header every proxied request carries.
var alwaysSentHeaders = []string{"Host", "Authorization", "Content-Length", LoopHeader}

// connectionHeaders frame a message or carry its connection: they are the
// hop's own, never passed on (passed, they would corrupt the request: a
// client's chunked Transfer-Encoding on an authorization request without
// a body).
var connectionHeaders = []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Upgrade", "TE", "Trailer", "Proxy-Connection"}

// unsentHeaders are the request headers never sent beside the ones always
// sent: connectionHeaders (Content-Length is always sent, the body's).
var unsentHeaders = connectionHeaders[1:]

// uncopiedHeaders are the response headers that are never copied into the
// request: Host (the Gateway API's exception), connectionHeaders and the
// loop header.
var uncopiedHeaders = append([]string{"Host", LoopHeader}, connectionHeaders...)

// externalAuth validates an ExternalAuth filter of an HTTPRoute rule. Its
// backend is resolved; one that does not resolve is for the caller to
// report (the rule answers 500). An error makes the rule invalid; note,
// when set, says what of a valid filter NGINX does not do as asked.
func externalAuth(in *Input, routeNamespace string, src *gatewayv1.HTTPExternalAuthFilter) (ea *ExternalAuth, note string, err error) {
	if src == nil {
		return nil, "", errors.New("the filter's configuration is missing")
	}
	switch src.ExternalAuthProtocol {
	case gatewayv1.HTTPRouteExternalAuthGRPCProtocol:
		return nil, "", errors.New("externalAuth protocol GRPC is Envoy's ext_authz over gRPC, which NGINX cannot speak (its auth_request makes HTTP subrequests); use protocol HTTP with an authorization service that answers HTTP")
	case gatewayv1.HTTPRouteExternalAuthHTTPProtocol:
	default:
		return nil, "", fmt.Errorf("externalAuth protocol %q is not supported; use HTTP", src.ExternalAuthProtocol)
	}
	// The API server's rules, which may not have run.
	switch {
	case src.GRPCAuthConfig != nil:
		return nil, "", errors.New("externalAuth: protocol must be 'GRPC' when grpc is set")
	case src.HTTPAuthConfig == nil:
		return nil, "", errors.New("externalAuth: http must be specified when protocol is set to 'HTTP'")
	}
	h := src.HTTPAuthConfig
	ea = &ExternalAuth{}
	if h.Path != "" {
		if err := validation.Path(h.Path); err != nil {
			return nil, "", fmt.Errorf("externalAuth.http.path: %w", err)
		}
		ea.PathPrefix = strings.TrimRight(h.Path, "/")
	}
	if ea.RequestHeaders, err = authHeaders("allowedHeaders", "sent to the authorization service", h.AllowedRequestHeaders, alwaysSentHeaders, unsentHeaders); err != nil {
		return nil, "", err
	}
	if ea.ResponseHeaders, err = authHeaders("allowedResponseHeaders", "copied into the request", h.AllowedResponseHeaders, nil, uncopiedHeaders); err != nil {
		return nil, "", err
	}
	if len(h.AllowedResponseHeaders) == 0 {
		note = "externalAuth.http.allowedResponseHeaders is empty: the Gateway API would copy every header of the authorization service's answer into the request, but NGINX copies only headers it is given by name, so none is copied; list the headers to copy"
	}
	if fb := src.ForwardBody; fb != nil {
		ea.MaxBodySize = int(fb.MaxSize)
	}
	ea.Backend, ea.reason = resolveBackend(in, KindHTTPRoute, routeNamespace, src.BackendRef, nil)
	if b := ea.Backend; b.Valid && b.Protocol != ProtocolHTTP {
		b.Valid = false
		b.Err = fmt.Sprintf("backendRef %s: the authorization service must speak HTTP/1.1 (the port's appProtocol says %s)", b.Name, b.Protocol)
		ea.reason = gatewayv1.RouteReasonUnsupportedProtocol
	}
	return ea, note, nil
}

// authHeaders checks a list of header names: each valid, listed once
// (case-insensitively); skip are names left out silently (sent anyway),
// refuse names that are refused (never what the list does).
func authHeaders(field, does string, names, skip, refuse []string) ([]string, error) {
	if err := validation.ListLength("externalAuth.http."+field, len(names), maxExternalAuthHeaders); err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if err := validation.HeaderName(n); err != nil {
			return nil, fmt.Errorf("externalAuth.http.%s: %w", field, err)
		}
		lower := strings.ToLower(n)
		for _, r := range refuse {
			if strings.EqualFold(n, r) {
				return nil, fmt.Errorf("externalAuth.http.%s: header %q is never %s: it is %s", field, n, does, uncopiedWhy(r))
			}
		}
		if seen[lower] || containsFold(skip, n) {
			continue
		}
		seen[lower] = true
		out = append(out, n)
	}
	return out, nil
}

// uncopiedWhy says why a response header is not copied into the request.
func uncopiedWhy(name string) string {
	switch name {
	case "Host":
		return "the request's Host, which the Gateway API keeps"
	case LoopHeader:
		return "Gatewall's own (it stops requests that go round through the Gateway)"
	}
	return "about one hop's connection or its message's framing, which NGINX sets for each"
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
