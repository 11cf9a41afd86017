package auth

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// everyFormat is an htpasswd file with one user of every password hash
// format NGINX on the data plane verifies, each hashing password.
const (
	everyFormat = "../../internal/validation/testdata/htpasswd-every-format"
	password    = "s3cret pass"
)

// basicRoutes: /basic authenticates with Basic against the users of the
// Secret, realm holding quotes and a backslash; /open does not; /jwt
// names a JWT filter whose remote key set is never fetched; /realm-off a
// filter whose realm, "off", would turn NGINX's authentication off;
// /missing a filter that does not exist.
func basicRoutes(users []byte) string {
	return gateway + `
---
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: ns}
type: Opaque
data: {auth: ` + base64.StdEncoding.EncodeToString(users) + `}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: basic, namespace: ns}
spec:
  type: Basic
  basic: {secretRef: {name: users}, realm: 'Staff "only" \ area'}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: jwt, namespace: ns}
spec:
  type: JWT
  jwt: {realm: api, source: Remote, remote: {uri: "https://idp.example.com/jwks"}}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: realm-off, namespace: ns}
spec:
  type: Basic
  basic: {secretRef: {name: users}, realm: "off"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /basic}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: basic}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /open}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /jwt}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: jwt}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /realm-off}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: realm-off}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /missing}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: nowhere}}]
    backendRefs: [{name: app, port: 80}]
`
}

// usersOf are the user names of an htpasswd file.
func usersOf(file []byte) []string {
	var users []string
	for _, line := range strings.Split(string(file), "\n") {
		if line != "" && line[0] != '#' {
			users = append(users, strings.SplitN(line, ":", 2)[0])
		}
	}
	return users
}

func basicRequest(path, user, pass string) *http.Request {
	r := request("GET", path, "")
	r.SetBasicAuth(user, pass)
	return r
}

// TestBasic: without credentials, or with a wrong password or user, the
// answer is 401 with the realm (its quotes escaped in the header);
// every user of every hash format gets in with the password; a rule
// without the filter serves everyone; a rule whose filter is refused
// (realm "off", which NGINX reads as no authentication: written, it served
// everyone) or does not exist answers 500, with or without credentials;
// a JWT rule whose key set never came serves no one.
func TestBasic(t *testing.T) {
	file := readFile(t, everyFormat)
	files, ids := renderGateway(t, basicRoutes(file))
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})

	resp, _ := d.do(request("GET", "/basic/x", ""))
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Staff \"only\" \\ area"` {
		t.Errorf("without credentials: %d %q, want 401 with the realm", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	users := usersOf(file)
	if len(users) != 24 {
		t.Fatalf("%d users in %s", len(users), everyFormat)
	}
	for _, u := range users {
		if resp, body := d.do(basicRequest("/basic/x", u, password)); resp.StatusCode != 200 {
			t.Errorf("user %s with the password: %d %s", u, resp.StatusCode, body)
		}
		if resp, _ := d.do(basicRequest("/basic/x", u, "wrong")); resp.StatusCode != 401 {
			t.Errorf("user %s with a wrong password: %d, want 401", u, resp.StatusCode)
		}
	}
	if got := len(app.requests()); got != len(users) {
		t.Errorf("the backend got %d requests, want %d (one per user with the password)", got, len(users))
	}
	if resp, _ := d.do(basicRequest("/basic/x", "nobody", password)); resp.StatusCode != 401 {
		t.Errorf("an unknown user: %d, want 401", resp.StatusCode)
	}
	if resp, _ := d.do(request("GET", "/open/x", "")); resp.StatusCode != 200 {
		t.Errorf("/open: %d, want 200", resp.StatusCode)
	}
	for _, path := range []string{"/realm-off/x", "/missing/x"} {
		for _, r := range []*http.Request{request("GET", path, ""), basicRequest(path, "plain", password)} {
			if resp, _ := d.do(r); resp.StatusCode != 500 {
				t.Errorf("%s: %d, want 500 (never served unauthenticated)", path, resp.StatusCode)
			}
		}
	}
	// The JWT filter's remote key set was never fetched (no endpoints
	// client runs here): its requests wait for it, never let through.
	for _, r := range []*http.Request{request("GET", "/jwt/x", ""), basicRequest("/jwt/x", "plain", password)} {
		if resp, _ := d.do(r); resp.StatusCode == 200 {
			t.Errorf("/jwt: %d, never served before its key set is fetched", resp.StatusCode)
		}
	}
	if got := app.requests(); len(got) != 1 || !strings.HasPrefix(got[0].URI, "/open") {
		t.Errorf("the backend got %v, want /open's request only", got)
	}
}

// TestBasicRotation: a new htpasswd in the Secret is a new file of users
// and a reload, no restart: the new password gets in, the old one no more.
func TestBasicRotation(t *testing.T) {
	oldFile := []byte("rot:{SHA}" + "5en6G6MezRroT3XKqkdPOmY/BfQ=\n") // sha1("secret")
	files, ids := renderGateway(t, basicRoutes(oldFile))
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})
	if resp, _ := d.do(basicRequest("/basic/", "rot", "secret")); resp.StatusCode != 200 {
		t.Fatalf("the first password: %d, want 200", resp.StatusCode)
	}
	master := d.srv.PID()
	newFile := []byte("rot:$apr1$Ab1./xyz$NVJvTwou3uQmXoZ1rmfxg.\n") // "s3cret pass"
	rotated, _ := renderGateway(t, basicRoutes(newFile))
	if err := d.srv.Reload(rotated); err != nil {
		t.Fatal(err)
	}
	if d.srv.PID() != master {
		t.Errorf("NGINX's master changed: it restarted")
	}
	if resp, _ := d.do(basicRequest("/basic/", "rot", password)); resp.StatusCode != 200 {
		t.Errorf("the new password: %d, want 200", resp.StatusCode)
	}
	if resp, _ := d.do(basicRequest("/basic/", "rot", "secret")); resp.StatusCode != 401 {
		t.Errorf("the old password: %d, want 401", resp.StatusCode)
	}
}
