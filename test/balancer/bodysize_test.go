package balancer

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// conditionalRoutes are two routes sharing the paths /h, /q and /m, each
// matched by a header, a query parameter or the method: NGINX serves them
// through one location per path that dispatches to an internal location
// per route. Route uploads has a ClientSettingsPolicy raising the body
// limit to 4m; route strict has none (NGINX's default, 1m).
var conditionalRoutes = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: uploads, namespace: ns, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches:
    - {path: {type: PathPrefix, value: /h}, headers: [{name: x-team, value: uploads}]}
    - {path: {type: PathPrefix, value: /q}, queryParams: [{name: team, value: uploads}]}
    - {path: {type: PathPrefix, value: /m}, method: PUT}
    backendRefs: [{name: rr, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: strict, namespace: ns, creationTimestamp: "2025-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches:
    - {path: {type: PathPrefix, value: /h}, headers: [{name: x-team, value: strict}]}
    - {path: {type: PathPrefix, value: /q}, queryParams: [{name: team, value: strict}]}
    - {path: {type: PathPrefix, value: /m}, method: POST}
    backendRefs: [{name: rr, port: 80}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: uploads, namespace: ns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: uploads}
  body: {maxSize: 4m}
`

// TestBodySizeOnConditionalRoutes: a ClientSettingsPolicy's body.maxSize
// raises the limit of a route whose matches need a header, a query
// parameter or a method, as it does for a route matched by path alone,
// for bodies of a known length and chunked ones; a route without a policy
// on the same paths keeps NGINX's 1m.
func TestBodySizeOnConditionalRoutes(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, conditionalRoutes))
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	const mib = 1 << 20
	type request struct {
		method, path, team string
	}
	for _, match := range []struct {
		name            string
		uploads, strict request
	}{
		{"header", request{"POST", "/h", "uploads"}, request{"POST", "/h", "strict"}},
		{"query", request{"POST", "/q?team=uploads", ""}, request{"POST", "/q?team=strict", ""}},
		{"method", request{"PUT", "/m", ""}, request{"POST", "/m", ""}},
	} {
		for _, c := range []struct {
			name    string
			req     request
			size    int
			chunked bool
			want    int
		}{
			{"policy's route, 2m", match.uploads, 2 * mib, false, http.StatusOK},
			{"policy's route, 2m chunked", match.uploads, 2 * mib, true, http.StatusOK},
			{"policy's route, over its 4m", match.uploads, 5 * mib, false, http.StatusRequestEntityTooLarge},
			{"policy's route, over its 4m chunked", match.uploads, 5 * mib, true, http.StatusRequestEntityTooLarge},
			{"route without a policy, 2m", match.strict, 2 * mib, false, http.StatusRequestEntityTooLarge},
			{"route without a policy, 2m chunked", match.strict, 2 * mib, true, http.StatusRequestEntityTooLarge},
			{"route without a policy, under 1m", match.strict, mib / 2, false, http.StatusOK},
		} {
			t.Run(match.name+"/"+c.name, func(t *testing.T) {
				if got := d.upload(c.req.method, c.req.path, c.req.team, c.size, c.chunked); got != c.want {
					t.Errorf("%s %s (x-team %q) with %d bytes: %d, want %d", c.req.method, c.req.path, c.req.team, c.size, got, c.want)
				}
			})
		}
	}
}

// upload sends a body of size bytes (chunked: of unknown length) to the
// listener and returns the status.
func (d *dataPlane) upload(method, path, team string, size int, chunked bool) int {
	d.t.Helper()
	var body io.Reader = bytes.NewReader(bytes.Repeat([]byte("x"), size))
	if chunked {
		body = io.MultiReader(body) // hides the length: Go sends it chunked
	}
	header := http.Header{}
	if team != "" {
		header.Set("X-Team", team)
	}
	return d.send(method, path, header, body)
}

// send sends a request to the listener on port 80 and returns its status.
func (d *dataPlane) send(method, path string, header http.Header, body io.Reader) int {
	d.t.Helper()
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:80%s", path), body)
	if err != nil {
		d.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
