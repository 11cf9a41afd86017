package graph

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/test/jwttest"
)

var (
	jwtRSA  = jwttest.RSA("rsa", 2048)
	jwtWeak = jwttest.RSA("weak", 1024)
	jwtEC   = jwttest.EC("ec", elliptic.P256())
)

func jwtFilter(name string, mutate func(*v1alpha1.JWTAuth)) *v1alpha1.AuthenticationFilter {
	j := &v1alpha1.JWTAuth{Realm: "api", Source: v1alpha1.JWTKeySourceFile,
		File: &v1alpha1.JWTFileKeySource{SecretRef: v1alpha1.LocalObjectReference{Name: "jwks"}}}
	if mutate != nil {
		mutate(j)
	}
	return &v1alpha1.AuthenticationFilter{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1alpha1.AuthenticationFilterSpec{Type: v1alpha1.AuthTypeJWT, JWT: j}}
}

func jwtSecret(name, key string, data []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{key: data}}
}

func authRule(filter string) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/" + filter)}, BackendRefs: appRefs(),
		Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: KindAuthenticationFilter, Name: gatewayv1.ObjectName(filter)}}}}
}

func claims(rules ...v1alpha1.AuthorizationRule) *v1alpha1.Authorization {
	return &v1alpha1.Authorization{Rules: rules}
}

func claim(name string, match v1alpha1.ClaimMatchType, header string, values ...string) v1alpha1.Claim {
	c := v1alpha1.Claim{Name: name, Match: match, Values: values}
	if header != "" {
		c.ProxySetHeader = &header
	}
	return c
}

// TestJWTFilters: what a JWT filter asks is checked and turned into what
// the data plane verifies with; what it cannot do is refused with why.
func TestJWTFilters(t *testing.T) {
	set := jwttest.JWKS([]jwttest.Key{jwtRSA, jwtWeak, jwtEC})
	caPEM := []byte(testCAPEM(t))
	all := v1alpha1.RequireTypeAll
	for name, c := range map[string]struct {
		filter  *v1alpha1.AuthenticationFilter
		objects []any
		check   func(*testing.T, *ExtensionFilter)
		err     string
	}{
		"a Secret's key set": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) { j.Leeway = ptr.To(v1alpha1.Duration("30s")) }),
			check: func(t *testing.T, ef *ExtensionFilter) {
				j := ef.Authentication.JWT
				if len(j.Keys.Keys) != 2 || j.Leeway != 30*time.Second || j.Secret.Name != "jwks" {
					t.Errorf("%+v", j)
				}
				if !strings.Contains(ef.Detail, "Secret ns/jwks holds 2 keys; refused (tokens signed with them are not let through): key 2 (kid \"weak\"): an RSA key of 1024 bits") {
					t.Errorf("detail %q", ef.Detail)
				}
			}},
		"no Secret":                 {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) { j.File.SecretRef.Name = "nowhere" }), err: "Secret ns/nowhere not found"},
		"no key auth":               {filter: jwtFilter("f", nil), objects: []any{jwtSecret("jwks", "jwks.json", set)}, err: `has no key "auth" (the JSON Web Key Set)`},
		"not a key set":             {filter: jwtFilter("f", nil), objects: []any{jwtSecret("jwks", "auth", []byte("invalid-jwks-data"))}, err: "not a JSON Web Key Set"},
		"only a weak key":           {filter: jwtFilter("f", nil), objects: []any{jwtSecret("jwks", "auth", jwttest.JWKS([]jwttest.Key{jwtWeak}))}, err: "no key of the set can verify tokens"},
		"a line break in the realm": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) { j.Realm = "a\r\nSet-Cookie: x" }), err: "control character"},
		"realm off is a realm":      {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) { j.Realm = "off" })},
		"a remote set": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/certs", CACertificateRefs: []v1alpha1.LocalObjectReference{{Name: "ca"}}}
			j.KeyCache = ptr.To(v1alpha1.Duration("1s"))
		}), objects: []any{jwtSecret("ca", "ca.crt", caPEM)}, check: func(t *testing.T, ef *ExtensionFilter) {
			r := ef.Authentication.JWT.Remote
			if r.URI != "https://idp.example.com/certs" || !strings.HasPrefix(r.CA, "-----BEGIN CERTIFICATE-----") || r.RefreshMillis != 5000 {
				t.Errorf("%+v", r)
			}
			if !strings.Contains(ef.Detail, "every 5s (keyCache 1s is taken as 5s") {
				t.Errorf("detail %q", ef.Detail)
			}
		}},
		"a remote set, its CA missing": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/certs", CACertificateRefs: []v1alpha1.LocalObjectReference{{Name: "ca"}}}
		}), err: "Secret ns/ca not found"},
		"a remote set, its CA not PEM": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/certs", CACertificateRefs: []v1alpha1.LocalObjectReference{{Name: "ca"}}}
		}), objects: []any{jwtSecret("ca", "ca.crt", []byte("not a certificate"))}, err: "caCertificateRefs: Secret ns/ca key ca.crt"},
		"a remote set over http": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "http://idp.example.com/certs"}
		}), err: "spec.jwt.remote.uri"},
		"NGF's rules": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = &v1alpha1.Authorization{Require: &all, Rules: []v1alpha1.AuthorizationRule{
				{Claims: []v1alpha1.Claim{claim("realm_access/roles", v1alpha1.ClaimMatchTypeExact, "X-Roles", "ops")}},
				{Require: &all, Claims: []v1alpha1.Claim{claim("email", v1alpha1.ClaimMatchTypeRegex, "", `.*@example\.com`, "root@.*"), claim("realm_access/roles", "", "X-Roles", "dev")}},
			}}
		}), check: func(t *testing.T, ef *ExtensionFilter) {
			j := ef.Authentication.JWT
			a := j.Authorization
			if !a.All || a.Rules[0].All || !a.Rules[1].All || strings.Join(a.Rules[0].Claims[0].Path, "/") != "realm_access/roles" ||
				a.Rules[1].Claims[0].Regex != `^(?:(?:.*@example\.com)|(?:root@.*))$` || a.Rules[1].Claims[1].Exact[0] != "dev" {
				t.Errorf("%+v", a)
			}
			if len(j.Headers) != 1 || j.Headers[0] != (ClaimHeader{Claim: "realm_access/roles", Header: "X-Roles"}) {
				t.Errorf("headers %+v: one, the claim's", j.Headers)
			}
		}},
		"a regex that backtracks": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("email", v1alpha1.ClaimMatchTypeRegex, "", "(a+)+b")}})
		}), err: "exponential"},
		"a regex that does not compile": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("email", v1alpha1.ClaimMatchTypeRegex, "", "a(")}})
		}), err: "does not compile"},
		"Host from a claim": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("sub", "", "host", "a")}})
		}), err: `header "host" is never set from a claim`},
		"a framing header from a claim": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("sub", "", "Transfer-Encoding", "a")}})
		}), err: `header "Transfer-Encoding" is never set from a claim`},
		"one header, two claims": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("sub", "", "X-Who", "a"), claim("email", "", "x-who", "b")}})
		}), err: `header "x-who" carries claim "sub" already`},
		"an empty name between slashes": {filter: jwtFilter("f", func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("a//b", "", "", "x")}})
		}), err: "an empty name between slashes"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := append([]any{c.filter}, c.objects...)
			if c.objects == nil {
				objs = append(objs, jwtSecret("jwks", "auth", set))
			}
			in := testInput(objs...)
			ef := ResolveExtensionFilter(in, KindAuthenticationFilter, key("ns", "f"))
			switch {
			case c.err != "":
				if !ef.Invalid || !strings.Contains(ef.Error, c.err) {
					t.Fatalf("invalid %v, error %q; want it refused with %q", ef.Invalid, ef.Error, c.err)
				}
			case ef.Error != "" || ef.Authentication == nil || ef.Authentication.JWT == nil:
				t.Fatalf("%+v", ef)
			case c.check != nil:
				c.check(t, ef)
			}
		})
	}
}

// testCAPEM is a CA certificate in PEM.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestKeySourcesBudget: the Gateway's room for remote key sets goes to
// the oldest routes' filters; a newer route's rule whose set does not fit
// answers 500 and says why, and filters sharing a set share its room.
func TestKeySourcesBudget(t *testing.T) {
	var objs []any
	now := time.Now()
	for i := range endpoints.MaxKeySources + 1 {
		name := fmt.Sprintf("f%02d", i)
		objs = append(objs, jwtFilter(name, func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: fmt.Sprintf("https://idp%d.example.com/certs", i)}
		}))
		r := testHTTPRoute("r"+name, authRule(name))
		r.CreationTimestamp = metav1.NewTime(now.Add(time.Duration(i) * time.Second))
		objs = append(objs, r)
	}
	// A newest filter sharing the oldest's set takes no room of its own.
	objs = append(objs, jwtFilter("shares", func(j *v1alpha1.JWTAuth) {
		j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
		j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp0.example.com/certs"}
	}))
	shares := testHTTPRoute("rshares", authRule("shares"))
	shares.CreationTimestamp = metav1.NewTime(now.Add(time.Hour))
	objs = append(objs, shares)
	g := buildTest(t, testInput(objs...))
	refused := 0
	for _, r := range g.Routes {
		f := r.Rules[0].Filters
		if f.Error == "" {
			continue
		}
		refused++
		if r.Key.Name != fmt.Sprintf("rf%02d", endpoints.MaxKeySources) || !strings.Contains(f.Error, "the Gateway's data plane holds 64 remote key sets") {
			t.Errorf("route %s refused: %s", r.Key.Name, f.Error)
		}
		if c := r.Parents[0].Conditions; !strings.Contains(fmt.Sprint(c), "its key set https://idp64.example.com/certs is not fetched") {
			t.Errorf("route %s's conditions do not say why: %v", r.Key.Name, c)
		}
	}
	if refused != 1 {
		t.Errorf("%d rules refused, want the newest one", refused)
	}
}

// TestClaimHeaderAndExternalAuth: a rule whose JWT filter forwards a
// claim in a header its ExternalAuth also copies from its service's
// answer is refused: NGINX would send both values.
func TestClaimHeaderAndExternalAuth(t *testing.T) {
	f := jwtFilter("f", func(j *v1alpha1.JWTAuth) {
		j.Authorization = claims(v1alpha1.AuthorizationRule{Claims: []v1alpha1.Claim{claim("sub", "", "X-User", "a")}})
	})
	rule := extAuthRule(&gatewayv1.HTTPAuthConfig{AllowedResponseHeaders: []string{"x-user"}})
	rule.Filters = append(rule.Filters, authRule("f").Filters...)
	g := buildTest(t, testInput(f, jwtSecret("jwks", "auth", jwttest.JWKS([]jwttest.Key{jwtEC})), testHTTPRoute("r", rule)))
	if r := g.Routes[0].Rules[0]; r.Valid || !strings.Contains(r.Err, `header "X-User" is set both from a claim`) {
		t.Errorf("valid %v, error %q", r.Valid, r.Err)
	}
}
