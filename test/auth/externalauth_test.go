package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// externalAuthRoutes: /ext asks the authorization service authz at
// /check + the request's URI, sending X-Api-Key beside what the Gateway
// API always sends, the body up to 16 bytes, and copying the answer's
// X-User-Id into the request; its timeouts.request (1s) bounds the
// asking too. /nobody sends no body; /nosvc names a Service that does
// not exist.
const externalAuthRoutes = gateway + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ext}}]
    timeouts: {request: 1s}
    filters:
    - type: ExternalAuth
      externalAuth:
        protocol: HTTP
        backendRef: {name: authz, port: 80}
        http: {path: /check/, allowedHeaders: [X-Api-Key], allowedResponseHeaders: [X-User-Id]}
        forwardBody: {maxSize: 16}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /nobody}}]
    filters:
    - type: ExternalAuth
      externalAuth:
        protocol: HTTP
        backendRef: {name: authz, port: 80}
        http: {allowedHeaders: [X-Api-Key], allowedResponseHeaders: [X-User-Id]}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /nosvc}}]
    filters:
    - type: ExternalAuth
      externalAuth:
        protocol: HTTP
        backendRef: {name: nowhere, port: 80}
        http: {allowedResponseHeaders: [X-User-Id]}
    backendRefs: [{name: app, port: 80}]
`

// authzDelay is how long the service takes to answer "slow": longer than
// the route's timeouts.request.
const authzDelay = 3 * time.Second

// authz answers by the request's X-Api-Key, as an authorization service
// would decide.
func authz(w http.ResponseWriter, r *http.Request) {
	switch r.Header.Get("X-Api-Key") {
	case "allow":
		w.Header().Set("X-User-Id", "alice")
		w.Header().Set("X-Not-Copied", "1")
		w.WriteHeader(200)
	case "allow-204":
		w.WriteHeader(204)
	case "deny401":
		w.Header().Set("WWW-Authenticate", `Bearer realm="authz"`)
		w.WriteHeader(401)
	case "deny403":
		w.WriteHeader(403)
	case "slow":
		time.Sleep(authzDelay)
		w.WriteHeader(200)
	case "redirect":
		w.Header().Set("Location", "https://login.example.com/")
		w.WriteHeader(302)
	default:
		w.WriteHeader(500)
	}
}

// TestExternalAuth: the service's verdict decides: 2xx lets the request
// through with the header the answer gives (the client's own value of it
// replaced), 401 (with the service's WWW-Authenticate) and 403 are the
// client's answer, anything else is 500; the service gets the method, its
// path prefix and the URI, Host, Authorization and the allowed header,
// nothing else of the client's, and the body up to forwardBody.maxSize
// (with its length); a larger body is refused (413) before the service or
// the backend sees it.
func TestExternalAuth(t *testing.T) {
	files, ids := renderGateway(t, externalAuthRoutes)
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	auth := d.server("127.0.0.3", authz)
	d.endpoints(map[string][]string{"app": {app.addr}, "authz": {auth.addr}})

	resp, body := d.do(request("POST", "/ext/a?q=1", "hello", "X-Api-Key", "allow", "Authorization", "Bearer t",
		"Cookie", "c=1", "X-Other", "o", "X-User-Id", "mallory"))
	if resp.StatusCode != 200 {
		t.Fatalf("allowed: %d %s", resp.StatusCode, body)
	}
	asked := auth.requests()
	if len(asked) != 1 {
		t.Fatalf("the service was asked %d times", len(asked))
	}
	a := asked[0]
	if a.Method != "POST" || a.URI != "/check/ext/a?q=1" || a.Body != "hello" || a.Header.Get("Content-Length") != "5" {
		t.Errorf("the service got %s %s with body %q (length %s), want POST /check/ext/a?q=1 with the body", a.Method, a.URI, a.Body, a.Header.Get("Content-Length"))
	}
	for name, want := range map[string]string{"X-Api-Key": "allow", "Authorization": "Bearer t", "Host": "gateway"} {
		if got := a.Header.Get(name); got != want {
			t.Errorf("the service got %s %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Cookie", "X-Other", "X-User-Id"} {
		if got := a.Header.Get(name); got != "" {
			t.Errorf("the service got %s %q, which the filter does not allow", name, got)
		}
	}
	served := app.requests()
	if len(served) != 1 || served[0].Header.Get("X-User-Id") != "alice" || served[0].Header.Get("X-Not-Copied") != "" ||
		served[0].Body != "hello" || served[0].Header.Get("X-Other") != "o" {
		t.Errorf("the backend got %+v, want the request with X-User-Id alice (the service's), X-Other, not X-Not-Copied", served)
	}

	// Only 2xx lets a request in; the service's 401 and 403 are the client's answer.
	for key, want := range map[string]int{"allow-204": 200, "deny401": 401, "deny403": 403, "redirect": 500, "error": 500} {
		resp, _ := d.do(request("GET", "/ext/b", "", "X-Api-Key", key, "X-User-Id", "mallory"))
		if resp.StatusCode != want {
			t.Errorf("the service answering %s: %d, want %d", key, resp.StatusCode, want)
		}
		if key == "deny401" && resp.Header.Get("WWW-Authenticate") != `Bearer realm="authz"` {
			t.Errorf("401 without the service's WWW-Authenticate: %q", resp.Header.Get("WWW-Authenticate"))
		}
		served := app.requests()
		if want == 200 && (len(served) != 1 || served[0].Header.Get("X-User-Id") != "") {
			t.Errorf("the service answering %s: the backend got %+v, want the request without the client's X-User-Id", key, served)
		}
		if want != 200 && len(served) != 0 {
			t.Errorf("the service answering %s: the backend got the request", key)
		}
	}
	auth.requests()

	// Bodies: none on a GET (length 0), and over maxSize refused,
	// declared or chunked, before anyone sees them.
	if resp, _ := d.do(request("GET", "/ext/c", "", "X-Api-Key", "allow")); resp.StatusCode != 200 {
		t.Errorf("a GET: %d", resp.StatusCode)
	}
	if a := auth.requests(); len(a) != 1 || a[0].Body != "" || a[0].Header.Get("Content-Length") != "0" {
		t.Errorf("the service got %+v for a GET, want no body and length 0", a)
	}
	app.requests()
	long := strings.Repeat("x", 17)
	chunked := request("POST", "/ext/d", long, "X-Api-Key", "allow")
	chunked.ContentLength = -1 // sent chunked
	for _, r := range []*http.Request{request("POST", "/ext/d", long, "X-Api-Key", "allow"), chunked} {
		if resp, _ := d.do(r); resp.StatusCode != 413 {
			t.Errorf("a body of 17 bytes (%v): %d, want 413", r.TransferEncoding, resp.StatusCode)
		}
	}
	if a, s := auth.requests(), app.requests(); len(a)+len(s) != 0 {
		t.Errorf("a body over maxSize reached the service (%d) or the backend (%d)", len(a), len(s))
	}
	if resp, _ := d.do(request("POST", "/ext/e", strings.Repeat("y", 16), "X-Api-Key", "allow")); resp.StatusCode != 200 {
		t.Errorf("a body of maxSize: %d, want 200", resp.StatusCode)
	}
	if a := auth.requests(); len(a) != 1 || a[0].Body != strings.Repeat("y", 16) {
		t.Errorf("the service got %+v, want the 16 bytes", a)
	}
	app.requests()

	// Without forwardBody, the service gets no body and a length of 0,
	// whatever the client sends, chunked too; the backend gets the body.
	chunked = request("POST", "/nobody", "chunked payload", "X-Api-Key", "allow")
	chunked.ContentLength = -1
	for _, r := range []*http.Request{request("POST", "/nobody", "payload", "X-Api-Key", "allow"), chunked} {
		if resp, _ := d.do(r); resp.StatusCode != 200 {
			t.Errorf("/nobody (%v): %d", r.TransferEncoding, resp.StatusCode)
		}
		if a := auth.requests(); len(a) != 1 || a[0].Body != "" || a[0].Header.Get("Content-Length") != "0" ||
			a[0].Header.Get("Transfer-Encoding") != "" || a[0].URI != "/nobody" {
			t.Errorf("the service got %+v, want /nobody with no body and length 0", a)
		}
		if s := app.requests(); len(s) != 1 || !strings.HasSuffix(s[0].Body, "payload") {
			t.Errorf("the backend got %+v, want the body", s)
		}
	}
}

// TestExternalAuthFailsClosed: when the service is slow (past the rule's
// timeout, which bounds the asking as a whole), refuses connections, has
// no endpoints or does not exist, the request is answered 500 and never
// reaches the backend.
func TestExternalAuthFailsClosed(t *testing.T) {
	files, ids := renderGateway(t, externalAuthRoutes)
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	auth := d.server("127.0.0.3", authz)
	d.endpoints(map[string][]string{"app": {app.addr}, "authz": {auth.addr}})

	// Two endpoints, both slow: the rule's timeout bounds the asking as a
	// whole, so the second is not asked once the first timed out.
	auth2 := d.server("127.0.0.4", authz)
	d.endpoints(map[string][]string{"app": {app.addr}, "authz": {auth.addr, auth2.addr}})
	began := time.Now()
	if resp, _ := d.do(request("GET", "/ext", "", "X-Api-Key", "slow")); resp.StatusCode != 500 {
		t.Errorf("a slow service: %d, want 500", resp.StatusCode)
	}
	if took := time.Since(began); took >= authzDelay {
		t.Errorf("a slow service held the request %v, as long as it took to answer (%v): the rule's timeout did not bound it", took, authzDelay)
	}
	if asked := len(auth.requests()) + len(auth2.requests()); asked != 1 {
		t.Errorf("the slow service was asked %d times, want once: every endpoint tried took the rule's timeout again", asked)
	}
	d.endpoints(map[string][]string{"app": {app.addr}, "authz": {auth.addr}})

	// Nothing listens on 127.0.0.9: connections are refused.
	d.endpoints(map[string][]string{"app": {app.addr}, "authz": {"127.0.0.9:8080"}})
	if resp, _ := d.do(request("GET", "/ext", "", "X-Api-Key", "allow")); resp.StatusCode != 500 {
		t.Errorf("a service refusing connections: %d, want 500", resp.StatusCode)
	}
	d.endpoints(map[string][]string{"app": {app.addr}})
	if resp, _ := d.do(request("GET", "/ext", "", "X-Api-Key", "allow")); resp.StatusCode != 500 {
		t.Errorf("a service without endpoints: %d, want 500", resp.StatusCode)
	}
	if resp, _ := d.do(request("GET", "/nosvc", "", "X-Api-Key", "allow")); resp.StatusCode != 500 {
		t.Errorf("a Service that does not exist: %d, want 500", resp.StatusCode)
	}
	if s := app.requests(); len(s) != 0 {
		t.Errorf("the backend got %d requests while the service could not say", len(s))
	}
}
