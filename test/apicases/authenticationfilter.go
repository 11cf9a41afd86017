package apicases

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// authFilter is an AuthenticationFilter of type Basic, changed by mutate.
func authFilter(mutate func(*v1alpha1.AuthenticationFilterSpec)) *v1alpha1.AuthenticationFilter {
	f := &v1alpha1.AuthenticationFilter{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1alpha1.AuthenticationFilterSpec{Type: v1alpha1.AuthTypeBasic,
			Basic: &v1alpha1.BasicAuth{SecretRef: v1alpha1.LocalObjectReference{Name: "users"}, Realm: "Restricted"}},
	}
	if mutate != nil {
		mutate(&f.Spec)
	}
	return f
}

// jwtFilter is an AuthenticationFilter of type JWT with keys in a Secret,
// changed by mutate.
func jwtFilter(mutate func(*v1alpha1.JWTAuth)) *v1alpha1.AuthenticationFilter {
	return authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
		s.Type, s.Basic = v1alpha1.AuthTypeJWT, nil
		s.JWT = &v1alpha1.JWTAuth{Realm: "api", Source: v1alpha1.JWTKeySourceFile,
			File: &v1alpha1.JWTFileKeySource{SecretRef: v1alpha1.LocalObjectReference{Name: "jwks"}}}
		if mutate != nil {
			mutate(s.JWT)
		}
	})
}

// oidcFilter is an AuthenticationFilter of type OIDC, changed by mutate.
func oidcFilter(mutate func(*v1alpha1.OIDCAuth)) *v1alpha1.AuthenticationFilter {
	return authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
		s.Type, s.Basic = v1alpha1.AuthTypeOIDC, nil
		s.OIDC = &v1alpha1.OIDCAuth{Issuer: "https://idp.example.com/realms/a", ClientID: "app",
			ClientSecretRef: v1alpha1.LocalObjectReference{Name: "client"}}
		if mutate != nil {
			mutate(s.OIDC)
		}
	})
}

// claims is an authorization with one rule of these claims.
func claims(cs ...v1alpha1.Claim) *v1alpha1.Authorization {
	return &v1alpha1.Authorization{Rules: []v1alpha1.AuthorizationRule{{Claims: cs}}}
}

func authenticationFilterCases() []Case {
	const (
		spec  = "spec"
		jwt   = "spec.jwt"
		oidc  = "spec.oidc"
		claim = "spec.jwt.authorization.rules[0].claims[0]"
	)
	should := func(pattern string) string { return fmt.Sprintf("should match '%s'", pattern) }
	refs := func(n int) []v1alpha1.LocalObjectReference {
		return make([]v1alpha1.LocalObjectReference, n)
	}
	args := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	return []Case{
		{Name: "AuthenticationFilter: Basic", Object: authFilter(nil)},
		{Name: "AuthenticationFilter: NGINX Gateway Fabric's example", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.Basic = &v1alpha1.BasicAuth{SecretRef: v1alpha1.LocalObjectReference{Name: "basic-auth"}, Realm: "Restricted basic-auth"}
		})},
		{Name: "AuthenticationFilter: an unknown type", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) { s.Type = "Digest" }),
			Field: "spec.type", Message: `supported values: "Basic", "OIDC", "JWT"`},
		{Name: "AuthenticationFilter: Basic without basic", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) { s.Basic = nil }),
			Field: spec, Message: validation.MsgBasicNeedsBasic},
		{Name: "AuthenticationFilter: Basic with jwt", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.JWT = jwtFilter(nil).Spec.JWT
		}), Field: spec, Message: validation.MsgBasicNoJWT},
		{Name: "AuthenticationFilter: Basic with oidc", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.OIDC = oidcFilter(nil).Spec.OIDC
		}), Field: spec, Message: validation.MsgBasicNoOIDC},
		{Name: "AuthenticationFilter: JWT", Object: jwtFilter(nil)},
		{Name: "AuthenticationFilter: JWT without jwt", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.Type, s.Basic = v1alpha1.AuthTypeJWT, nil
		}), Field: spec, Message: validation.MsgJWTNeedsJWT},
		{Name: "AuthenticationFilter: JWT with basic", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.Type, s.JWT = v1alpha1.AuthTypeJWT, jwtFilter(nil).Spec.JWT
		}), Field: spec, Message: validation.MsgJWTNoBasic},
		{Name: "AuthenticationFilter: OIDC", Object: oidcFilter(nil)},
		{Name: "AuthenticationFilter: OIDC without oidc", Object: authFilter(func(s *v1alpha1.AuthenticationFilterSpec) {
			s.Type, s.Basic = v1alpha1.AuthTypeOIDC, nil
		}), Field: spec, Message: validation.MsgOIDCNeedsOIDC},
		{Name: "AuthenticationFilter: OIDC with jwt", Object: func() client.Object {
			f := oidcFilter(nil)
			f.Spec.JWT = jwtFilter(nil).Spec.JWT
			return f
		}(), Field: spec, Message: validation.MsgOIDCNoJWT},
		{Name: "AuthenticationFilter: JWT File without file", Object: jwtFilter(func(j *v1alpha1.JWTAuth) { j.File = nil }),
			Field: jwt, Message: validation.MsgFileNeedsFile},
		{Name: "AuthenticationFilter: JWT File with remote", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/jwks"}
		}), Field: jwt, Message: validation.MsgFileNoRemote},
		{Name: "AuthenticationFilter: JWT Remote", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com:8443/realms/a/jwks"}
		})},
		{Name: "AuthenticationFilter: JWT Remote without remote", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
		}), Field: jwt, Message: validation.MsgRemoteNeedsRemote},
		{Name: "AuthenticationFilter: JWT Remote with file", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Source = v1alpha1.JWTKeySourceRemote
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/jwks"}
		}), Field: jwt, Message: validation.MsgRemoteNoFile},
		{Name: "AuthenticationFilter: JWT remote uri over http", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "http://idp.example.com/jwks"}
		}), Field: "spec.jwt.remote.uri", Message: should(validation.HTTPSURLPattern)},
		{Name: "AuthenticationFilter: JWT two CAs", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Source, j.File = v1alpha1.JWTKeySourceRemote, nil
			j.Remote = &v1alpha1.JWTRemoteKeySource{URI: "https://idp.example.com/jwks", CACertificateRefs: refs(2)}
		}), Field: "spec.jwt.remote.caCertificateRefs", Message: "must have at most 1 item"},
		{Name: "AuthenticationFilter: JWT leeway", Object: jwtFilter(func(j *v1alpha1.JWTAuth) { j.Leeway = ptr(v1alpha1.Duration("1.5s")) }),
			Field: "spec.jwt.leeway", Message: should(validation.DurationPattern)},
		{Name: "AuthenticationFilter: JWT claims", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "realm_access/roles", Values: []string{"admin"}, ProxySetHeader: ptr("X-Roles")},
				v1alpha1.Claim{Name: "sub", Match: v1alpha1.ClaimMatchTypeRegex, Values: []string{"^user-[0-9]+"}})
		}), Stored: func(o client.Object) error {
			a := o.(*v1alpha1.AuthenticationFilter).Spec.JWT.Authorization
			if a.Require == nil || *a.Require != v1alpha1.RequireTypeAny || a.Rules[0].Require == nil ||
				a.Rules[0].Claims[0].Match != v1alpha1.ClaimMatchTypeExact {
				return fmt.Errorf("defaults not stored: %+v", a)
			}
			return nil
		}},
		{Name: "AuthenticationFilter: repeated claim", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{"a"}}, v1alpha1.Claim{Name: "sub", Values: []string{"b"}})
		}), Field: "spec.jwt.authorization.rules[0]", Message: validation.MsgUniqueClaimNames},
		{Name: "AuthenticationFilter: claim name", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "a.b", Values: []string{"a"}})
		}), Field: claim + ".name", Message: should(validation.ClaimNamePattern)},
		{Name: "AuthenticationFilter: claim value", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{"a;b"}})
		}), Field: claim + ".values[0]", Message: should(validation.ClaimValuePattern)},
		{Name: "AuthenticationFilter: claim header", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{"a"}, ProxySetHeader: ptr("X_Sub")})
		}), Field: claim + ".proxySetHeader", Message: should(validation.ClaimHeaderPattern)},
		{Name: "AuthenticationFilter: claim without values", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{}})
		}), Field: claim + ".values", Message: "should have at least 1 items"},
		{Name: "AuthenticationFilter: claim value too long", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{strings.Repeat("a", 257)}})
		}), Field: claim + ".values[0]", Message: "may not be more than 256 bytes"},
		{Name: "AuthenticationFilter: unknown require", Object: jwtFilter(func(j *v1alpha1.JWTAuth) {
			j.Authorization = claims(v1alpha1.Claim{Name: "sub", Values: []string{"a"}})
			j.Authorization.Require = ptr(v1alpha1.RequireType("Most"))
		}), Field: "spec.jwt.authorization.require", Message: `supported values: "All", "Any"`},
		{Name: "AuthenticationFilter: OIDC extraAuthArgs", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.ExtraAuthArgs = map[string]string{"prompt": "consent", "a.b_c-d": "x"}
		})},
		{Name: "AuthenticationFilter: OIDC extraAuthArgs key", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.ExtraAuthArgs = map[string]string{"a&b": "x"}
		}), Field: oidc, Message: validation.MsgExtraAuthArgKeys},
		{Name: "AuthenticationFilter: OIDC 17 extraAuthArgs", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.ExtraAuthArgs = args(17) }),
			Field: "spec.oidc.extraAuthArgs", Message: "must have at most 16 items"},
		{Name: "AuthenticationFilter: OIDC issuer", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.Issuer = "https://IdP.example.com" }),
			Field: "spec.oidc.issuer", Message: should(validation.HTTPSURLPattern)},
		{Name: "AuthenticationFilter: OIDC empty clientID", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.ClientID = "" }),
			Field: "spec.oidc.clientID", Message: "should be at least 1 chars long"},
		{Name: "AuthenticationFilter: OIDC redirectURI path", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.RedirectURI = ptr("/oidc_callback") })},
		{Name: "AuthenticationFilter: OIDC redirectURI", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.RedirectURI = ptr("oidc_callback") }),
			Field: "spec.oidc.redirectURI", Message: should(validation.RedirectURIPattern)},
		{Name: "AuthenticationFilter: OIDC logout", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.Logout = &v1alpha1.OIDCLogoutConfig{URI: ptr("/logout"), PostLogoutURI: ptr("http://app.example.com/bye"), FrontChannelLogoutURI: ptr("/fc")}
		})},
		{Name: "AuthenticationFilter: OIDC logout uri", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.Logout = &v1alpha1.OIDCLogoutConfig{URI: ptr("logout")}
		}), Field: "spec.oidc.logout.uri", Message: should(validation.LogoutPathPattern)},
		{Name: "AuthenticationFilter: OIDC postLogoutURI", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.Logout = &v1alpha1.OIDCLogoutConfig{PostLogoutURI: ptr("ftp://x")}
		}), Field: "spec.oidc.logout.postLogoutURI", Message: should(validation.PostLogoutURIPattern)},
		{Name: "AuthenticationFilter: OIDC two CAs", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) { o.CACertificateRefs = refs(2) }),
			Field: "spec.oidc.caCertificateRefs", Message: "must have at most 1 item"},
		{Name: "AuthenticationFilter: OIDC session timeout", Object: oidcFilter(func(o *v1alpha1.OIDCAuth) {
			o.Session = &v1alpha1.OIDCSessionConfig{Timeout: ptr(v1alpha1.Duration("8d"))}
		}), Field: "spec.oidc.session.timeout", Message: should(validation.DurationPattern)},
	}
}
