package validation

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Patterns of AuthenticationFilter's fields: NGINX Gateway Fabric's, which
// the CRD markers repeat.
const (
	// HTTPSURLPattern is an https URL of a lower-case DNS host, an optional
	// port and path (OIDC issuer and configURL, JWT remote uri).
	HTTPSURLPattern = `^https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?$`
	// RedirectURIPattern is an https URL or an absolute path (OIDC redirectURI).
	RedirectURIPattern = `^(https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?|\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)$`
	// PostLogoutURIPattern is an http(s) URL or an absolute path.
	PostLogoutURIPattern = `^(https?:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?|\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)$`
	// LogoutPathPattern is an absolute path (OIDC logout uri and frontChannelLogoutURI).
	LogoutPathPattern = `^/[A-Za-z0-9._~!&'()*+,=@/-]*$`
	// ClaimHeaderPattern is a header name a claim is sent in.
	ClaimHeaderPattern = `^[-A-Za-z0-9]+$`
	// ClaimNamePattern is a claim's name.
	ClaimNamePattern = `^[a-zA-Z0-9_/-]+$`
	// ClaimValuePattern is a claim's value: no line breaks nor characters
	// NGINX's configuration or a shell gives meaning to.
	ClaimValuePattern = `^[^\n\r;#\$\{\}\|&><'"]+$`
	// extraAuthArgKeyPattern is the CEL rule's pattern of OIDC extraAuthArgs keys.
	extraAuthArgKeyPattern = `^[a-zA-Z0-9_.-]+$`
)

// Messages of AuthenticationFilter's CEL rules, identical to the CRD's.
const (
	MsgBasicNeedsBasic   = "type Basic requires spec.basic to be set"
	MsgBasicNoJWT        = "type Basic must not set spec.jwt"
	MsgBasicNoOIDC       = "type Basic must not set spec.oidc"
	MsgOIDCNeedsOIDC     = "type OIDC requires spec.oidc to be set"
	MsgOIDCNoBasic       = "type OIDC must not set spec.basic"
	MsgOIDCNoJWT         = "type OIDC must not set spec.jwt"
	MsgJWTNeedsJWT       = "type JWT requires spec.jwt to be set"
	MsgJWTNoBasic        = "type JWT must not set spec.basic"
	MsgJWTNoOIDC         = "type JWT must not set spec.oidc"
	MsgFileNeedsFile     = "source File requires spec.file to be set."
	MsgFileNoRemote      = "source File must not set spec.remote."
	MsgRemoteNeedsRemote = "source Remote requires spec.remote to be set."
	MsgRemoteNoFile      = "source Remote must not set spec.file."
	MsgExtraAuthArgKeys  = "extraAuthArgs keys must contain only alphanumeric characters, hyphens, underscores, or dots"
	MsgUniqueClaimNames  = "claim names must be unique within a rule"
)

// Limits of AuthenticationFilter's lists, the CRD's.
const (
	maxExtraAuthArgs     = 16
	maxCARefs            = 1
	maxAuthorizationList = 32
	maxClaimName         = 253
	maxClaimValue        = 256
)

var (
	httpsURLRE        = regexp.MustCompile(HTTPSURLPattern)
	redirectURIRE     = regexp.MustCompile(RedirectURIPattern)
	postLogoutURIRE   = regexp.MustCompile(PostLogoutURIPattern)
	logoutPathRE      = regexp.MustCompile(LogoutPathPattern)
	claimHeaderRE     = regexp.MustCompile(ClaimHeaderPattern)
	claimNameRE       = regexp.MustCompile(ClaimNamePattern)
	claimValueRE      = regexp.MustCompile(ClaimValuePattern)
	extraAuthArgKeyRE = regexp.MustCompile(extraAuthArgKeyPattern)
)

// AuthenticationFilter re-checks an AuthenticationFilter against its CRD's
// rules (schema and CEL). What the data plane needs beyond them (the
// Secret's htpasswd lines, a realm NGINX can carry) is checked where the
// filter is resolved (graph).
func AuthenticationFilter(f *v1alpha1.AuthenticationFilter) field.ErrorList {
	spec := field.NewPath("spec")
	s := f.Spec
	var errs field.ErrorList
	switch s.Type {
	case v1alpha1.AuthTypeBasic, v1alpha1.AuthTypeJWT, v1alpha1.AuthTypeOIDC:
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Type, []string{"Basic", "OIDC", "JWT"}))
	}
	// The union's rules, in the CRD's order.
	for _, r := range []struct {
		broken bool
		msg    string
	}{
		{s.Type == v1alpha1.AuthTypeBasic && s.Basic == nil, MsgBasicNeedsBasic},
		{s.Type == v1alpha1.AuthTypeBasic && s.JWT != nil, MsgBasicNoJWT},
		{s.Type == v1alpha1.AuthTypeBasic && s.OIDC != nil, MsgBasicNoOIDC},
		{s.Type == v1alpha1.AuthTypeOIDC && s.OIDC == nil, MsgOIDCNeedsOIDC},
		{s.Type == v1alpha1.AuthTypeOIDC && s.Basic != nil, MsgOIDCNoBasic},
		{s.Type == v1alpha1.AuthTypeOIDC && s.JWT != nil, MsgOIDCNoJWT},
		{s.Type == v1alpha1.AuthTypeJWT && s.JWT == nil, MsgJWTNeedsJWT},
		{s.Type == v1alpha1.AuthTypeJWT && s.Basic != nil, MsgJWTNoBasic},
		{s.Type == v1alpha1.AuthTypeJWT && s.OIDC != nil, MsgJWTNoOIDC},
	} {
		if r.broken {
			errs = append(errs, field.Invalid(spec, "object", r.msg))
		}
	}
	if s.OIDC != nil {
		errs = append(errs, oidcAuth(spec.Child("oidc"), s.OIDC)...)
	}
	if s.JWT != nil {
		errs = append(errs, jwtAuth(spec.Child("jwt"), s.JWT)...)
	}
	return errs
}

func oidcAuth(path *field.Path, o *v1alpha1.OIDCAuth) field.ErrorList {
	var errs field.ErrorList
	if len(o.ExtraAuthArgs) > maxExtraAuthArgs {
		errs = append(errs, field.TooMany(path.Child("extraAuthArgs"), len(o.ExtraAuthArgs), maxExtraAuthArgs))
	}
	keys := make([]string, 0, len(o.ExtraAuthArgs))
	for k := range o.ExtraAuthArgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !extraAuthArgKeyRE.MatchString(k) {
			errs = append(errs, field.Invalid(path, "object", MsgExtraAuthArgKeys))
			break
		}
	}
	errs = append(errs, optionalMatch(path.Child("configURL"), o.ConfigURL, httpsURLRE)...)
	errs = append(errs, optionalMatch(path.Child("redirectURI"), o.RedirectURI, redirectURIRE)...)
	errs = append(errs, matches(path.Child("issuer"), o.Issuer, httpsURLRE)...)
	if o.ClientID == "" {
		errs = append(errs, field.Invalid(path.Child("clientID"), o.ClientID, "should be at least 1 chars long"))
	}
	if len(o.CACertificateRefs) > maxCARefs {
		errs = append(errs, field.TooMany(path.Child("caCertificateRefs"), len(o.CACertificateRefs), maxCARefs))
	}
	if se := o.Session; se != nil {
		errs = append(errs, duration(path.Child("session", "timeout"), se.Timeout)...)
	}
	if l := o.Logout; l != nil {
		lp := path.Child("logout")
		errs = append(errs, optionalMatch(lp.Child("uri"), l.URI, logoutPathRE)...)
		errs = append(errs, optionalMatch(lp.Child("postLogoutURI"), l.PostLogoutURI, postLogoutURIRE)...)
		errs = append(errs, optionalMatch(lp.Child("frontChannelLogoutURI"), l.FrontChannelLogoutURI, logoutPathRE)...)
	}
	if o.Authorization != nil {
		errs = append(errs, authorization(path.Child("authorization"), o.Authorization)...)
	}
	return errs
}

func jwtAuth(path *field.Path, j *v1alpha1.JWTAuth) field.ErrorList {
	var errs field.ErrorList
	switch j.Source {
	case v1alpha1.JWTKeySourceFile, v1alpha1.JWTKeySourceRemote:
	default:
		errs = append(errs, field.NotSupported(path.Child("source"), j.Source, []string{"File", "Remote"}))
	}
	for _, r := range []struct {
		broken bool
		msg    string
	}{
		{j.Source == v1alpha1.JWTKeySourceFile && j.File == nil, MsgFileNeedsFile},
		{j.Source == v1alpha1.JWTKeySourceFile && j.Remote != nil, MsgFileNoRemote},
		{j.Source == v1alpha1.JWTKeySourceRemote && j.Remote == nil, MsgRemoteNeedsRemote},
		{j.Source == v1alpha1.JWTKeySourceRemote && j.File != nil, MsgRemoteNoFile},
	} {
		if r.broken {
			errs = append(errs, field.Invalid(path, "object", r.msg))
		}
	}
	errs = append(errs, duration(path.Child("keyCache"), j.KeyCache)...)
	errs = append(errs, duration(path.Child("leeway"), j.Leeway)...)
	if r := j.Remote; r != nil {
		errs = append(errs, matches(path.Child("remote", "uri"), r.URI, httpsURLRE)...)
		if len(r.CACertificateRefs) > maxCARefs {
			errs = append(errs, field.TooMany(path.Child("remote", "caCertificateRefs"), len(r.CACertificateRefs), maxCARefs))
		}
	}
	if j.Authorization != nil {
		errs = append(errs, authorization(path.Child("authorization"), j.Authorization)...)
	}
	return errs
}

func authorization(path *field.Path, a *v1alpha1.Authorization) field.ErrorList {
	errs := requireType(path.Child("require"), a.Require)
	errs = append(errs, listLength(path.Child("rules"), len(a.Rules), 1, maxAuthorizationList)...)
	for i, r := range a.Rules {
		rp := path.Child("rules").Index(i)
		errs = append(errs, requireType(rp.Child("require"), r.Require)...)
		errs = append(errs, listLength(rp.Child("claims"), len(r.Claims), 1, maxAuthorizationList)...)
		names := map[string]int{}
		for _, c := range r.Claims {
			names[c.Name]++
		}
		for _, n := range names {
			if n > 1 {
				errs = append(errs, field.Invalid(rp, "object", MsgUniqueClaimNames))
				break
			}
		}
		for j, c := range r.Claims {
			cp := rp.Child("claims").Index(j)
			if c.ProxySetHeader != nil {
				errs = append(errs, stringField(cp.Child("proxySetHeader"), *c.ProxySetHeader, 0, maxClaimName, claimHeaderRE)...)
			}
			errs = append(errs, stringField(cp.Child("name"), c.Name, 0, maxClaimName, claimNameRE)...)
			switch c.Match {
			case "", v1alpha1.ClaimMatchTypeExact, v1alpha1.ClaimMatchTypeRegex:
			default:
				errs = append(errs, field.NotSupported(cp.Child("match"), c.Match, []string{"Exact", "Regex"}))
			}
			errs = append(errs, listLength(cp.Child("values"), len(c.Values), 1, maxAuthorizationList)...)
			for k, v := range c.Values {
				errs = append(errs, stringField(cp.Child("values").Index(k), v, 0, maxClaimValue, claimValueRE)...)
			}
		}
	}
	return errs
}

// requireType checks an optional All|Any (unset is the default, Any).
func requireType(path *field.Path, r *v1alpha1.RequireType) field.ErrorList {
	if r == nil || *r == v1alpha1.RequireTypeAll || *r == v1alpha1.RequireTypeAny {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, *r, []string{"All", "Any"})}
}

// listLength checks a list's length with the API server's messages.
func listLength(path *field.Path, n, minItems, maxItems int) field.ErrorList {
	switch {
	case n < minItems:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("should have at least %d items", minItems))}
	case n > maxItems:
		return field.ErrorList{field.TooMany(path, n, maxItems)}
	}
	return nil
}

func optionalMatch(path *field.Path, s *string, re *regexp.Regexp) field.ErrorList {
	if s == nil {
		return nil
	}
	return matches(path, *s, re)
}

// maxRealm bounds a realm: it is written into every 401 answer's header.
const maxRealm = 256

// Realm checks an authentication realm, which NGINX's auth_basic writes
// into the WWW-Authenticate header of a 401 answer (realm="..."). Quotes
// and backslashes are carried (the renderer escapes them as the header's
// quoted string needs); what no escaping carries is refused: control
// characters (a line break would end the header), '$' (auth_basic reads
// variables), and "off", which NGINX reads as turning authentication off,
// so that the rule would serve everyone.
func Realm(v string) error {
	switch {
	case len(v) > maxRealm:
		return fmt.Errorf("the realm is %d bytes long, more than %d", len(v), maxRealm)
	case strings.ContainsFunc(v, isControl):
		return fmt.Errorf("the realm %q holds a control character", v)
	case strings.Contains(v, "$"):
		return fmt.Errorf("the realm %q holds '$', which NGINX would read as a variable", v)
	case v == "off":
		return fmt.Errorf(`the realm "off" turns NGINX's authentication off: every request would be let in; choose another realm`)
	}
	return nil
}

// BearerRealm checks a JWT filter's realm, which Gatewall's Lua writes into
// the WWW-Authenticate header of a 401 answer (Bearer realm="...") with
// its quotes and backslashes escaped: control characters are refused (a
// line break would end the header). Unlike auth_basic's, nothing reads it
// as a variable or as "off".
func BearerRealm(v string) error {
	switch {
	case len(v) > maxRealm:
		return fmt.Errorf("the realm is %d bytes long, more than %d", len(v), maxRealm)
	case strings.ContainsFunc(v, isControl):
		return fmt.Errorf("the realm %q holds a control character", v)
	}
	return nil
}
