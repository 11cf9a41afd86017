package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthenticationFilter makes NGINX authenticate the requests of the route
// rules that name it in an ExtensionRef filter (group gateway.nginx.org,
// kind AuthenticationFilter, in the route's namespace): HTTPRoute and
// GRPCRoute rules. The object is NGINX Gateway Fabric's AuthenticationFilter,
// field for field, so its manifests apply unchanged. Gatewall enforces
// types Basic and JWT (verified by Gatewall's own Lua on NGINX OSS, where
// NGINX Gateway Fabric needs NGINX Plus); type OIDC is validated and
// reported as not programmed, and the rules that use it answer 500 instead
// of serving unauthenticated.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api;nginx-gateway-fabric,scope=Namespaced,shortName=authfilter;authenticationfilter
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AuthenticationFilter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says how requests are authenticated.
	Spec AuthenticationFilterSpec `json:"spec"`

	// Status is what each controller that read the filter made of it.
	// +optional
	Status AuthenticationFilterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AuthenticationFilterList is a list of AuthenticationFilters.
type AuthenticationFilterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AuthenticationFilter `json:"items"`
}

// AuthenticationFilterSpec is one authentication mechanism: type names it,
// and exactly the field of that type is set.
//
// +kubebuilder:validation:XValidation:message="type Basic requires spec.basic to be set",rule="self.type != 'Basic' || has(self.basic)"
// +kubebuilder:validation:XValidation:message="type Basic must not set spec.jwt",rule="self.type != 'Basic' || !has(self.jwt)"
// +kubebuilder:validation:XValidation:message="type Basic must not set spec.oidc",rule="self.type != 'Basic' || !has(self.oidc)"
// +kubebuilder:validation:XValidation:message="type OIDC requires spec.oidc to be set",rule="self.type != 'OIDC' || has(self.oidc)"
// +kubebuilder:validation:XValidation:message="type OIDC must not set spec.basic",rule="self.type != 'OIDC' || !has(self.basic)"
// +kubebuilder:validation:XValidation:message="type OIDC must not set spec.jwt",rule="self.type != 'OIDC' || !has(self.jwt)"
// +kubebuilder:validation:XValidation:message="type JWT requires spec.jwt to be set",rule="self.type != 'JWT' || has(self.jwt)"
// +kubebuilder:validation:XValidation:message="type JWT must not set spec.basic",rule="self.type != 'JWT' || !has(self.basic)"
// +kubebuilder:validation:XValidation:message="type JWT must not set spec.oidc",rule="self.type != 'JWT' || !has(self.oidc)"
type AuthenticationFilterSpec struct {
	// Basic is HTTP Basic authentication against an htpasswd file held in
	// a Secret. Set when type is Basic.
	// +optional
	Basic *BasicAuth `json:"basic,omitempty"`

	// OIDC is OpenID Connect authentication. NGINX does it with NGINX
	// Plus's OpenID Connect module, which Gatewall's data plane (NGINX OSS)
	// does not have: the filter is reported as not programmed. Set when
	// type is OIDC.
	// +optional
	OIDC *OIDCAuth `json:"oidc,omitempty"`

	// JWT is JSON Web Token authentication: a request carries
	// "Authorization: Bearer <token>", whose signature and times the data
	// plane verifies. Set when type is JWT.
	// +optional
	JWT *JWTAuth `json:"jwt,omitempty"`

	// Type is the authentication mechanism: Basic, JWT or OIDC.
	Type AuthType `json:"type"`
}

// AuthType is an authentication mechanism.
//
// +kubebuilder:validation:Enum=Basic;OIDC;JWT
type AuthType string

// Authentication mechanisms.
const (
	// AuthTypeBasic is HTTP Basic authentication (RFC 7617).
	AuthTypeBasic AuthType = "Basic"
	// AuthTypeOIDC is OpenID Connect authentication.
	AuthTypeOIDC AuthType = "OIDC"
	// AuthTypeJWT is JSON Web Token authentication (RFC 7519).
	AuthTypeJWT AuthType = "JWT"
)

// LocalObjectReference names an object in the namespace of the object
// that refers to it.
type LocalObjectReference struct {
	// Name is the object's name.
	Name string `json:"name"`
}

// BasicAuthSecretKey is the key of the Secret a Basic filter names whose
// value is the htpasswd file: one "user:hash" line per user.
const BasicAuthSecretKey = "auth"

// BasicAuth is HTTP Basic authentication: a client sends a user name and
// password, which NGINX checks against an htpasswd file.
type BasicAuth struct {
	// SecretRef is the Secret, in the filter's namespace, whose key "auth"
	// holds the htpasswd file: one line "user:hash" per user. Every line
	// must hold a hash NGINX can verify (see docs/authentication.md); a
	// line it could not is refused with its number in the filter's status.
	SecretRef LocalObjectReference `json:"secretRef"`

	// Realm is the protection space NGINX names in the WWW-Authenticate
	// header of a 401 answer (realm="..."): browsers show it when they ask
	// for credentials.
	Realm string `json:"realm"`
}

// OIDCAuth is OpenID Connect authentication. Only NGINX Plus's OpenID
// Connect module does it; Gatewall validates it and reports it as not
// programmed.
//
// +kubebuilder:validation:XValidation:message="extraAuthArgs keys must contain only alphanumeric characters, hyphens, underscores, or dots",rule="!has(self.extraAuthArgs) || self.extraAuthArgs.all(key, key.matches('^[a-zA-Z0-9_.-]+$'))"
type OIDCAuth struct {
	// ExtraAuthArgs are query arguments added to the authentication
	// request sent to the provider.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	ExtraAuthArgs map[string]string `json:"extraAuthArgs,omitempty"`

	// CRLSecretRef is a Secret, in the filter's namespace, whose key
	// "ca.crl" holds a certificate revocation list (PEM) for the
	// provider's certificates.
	// +optional
	CRLSecretRef *LocalObjectReference `json:"crlSecretRef,omitempty"`

	// ConfigURL is where the provider's metadata is read; by default the
	// issuer's /.well-known/openid-configuration.
	// +optional
	// +kubebuilder:validation:Pattern=`^https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?$`
	ConfigURL *string `json:"configURL,omitempty"`

	// PKCE turns Proof Key for Code Exchange on or off; unset, it is used
	// when the provider requires it.
	// +optional
	PKCE *bool `json:"pkce,omitempty"`

	// Session configures the session cookie.
	// +optional
	Session *OIDCSessionConfig `json:"session,omitempty"`

	// Logout configures how sessions end.
	// +optional
	Logout *OIDCLogoutConfig `json:"logout,omitempty"`

	// RedirectURI is where the provider sends the user back: a path, or a
	// full https URL of an external callback.
	// +optional
	// +kubebuilder:validation:Pattern=`^(https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?|\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)$`
	RedirectURI *string `json:"redirectURI,omitempty"`

	// Authorization are claims the ID token must carry.
	// +optional
	Authorization *Authorization `json:"authorization,omitempty"`

	// ClientSecretRef is the Secret, in the filter's namespace, whose key
	// "client-secret" holds the client's secret.
	ClientSecretRef LocalObjectReference `json:"clientSecretRef"`

	// Issuer is the provider's URL, exactly as its metadata names it.
	// +kubebuilder:validation:Pattern=`^https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?$`
	Issuer string `json:"issuer"`

	// ClientID is the client's identifier at the provider.
	// +kubebuilder:validation:MinLength=1
	ClientID string `json:"clientID"`

	// CACertificateRefs are Secrets, in the filter's namespace, whose key
	// "ca.crt" holds CA certificates (PEM) that verify the provider's
	// endpoints; at most one. Unset: the system's CA bundle.
	// +optional
	// +kubebuilder:validation:MaxItems=1
	CACertificateRefs []LocalObjectReference `json:"caCertificateRefs,omitempty"`
}

// OIDCSessionConfig configures an OpenID Connect session.
type OIDCSessionConfig struct {
	// CookieName is the session cookie's name.
	// +optional
	CookieName *string `json:"cookieName,omitempty"`

	// Timeout is how long a session lasts.
	// +optional
	Timeout *Duration `json:"timeout,omitempty"`
}

// OIDCLogoutConfig configures how an OpenID Connect session ends.
type OIDCLogoutConfig struct {
	// URI is the path that ends a session.
	// +optional
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=@/-]*$`
	URI *string `json:"uri,omitempty"`

	// PostLogoutURI is where the user goes after logging out: a path or an
	// http(s) URL.
	// +optional
	// +kubebuilder:validation:Pattern=`^(https?:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?|\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)$`
	PostLogoutURI *string `json:"postLogoutURI,omitempty"`

	// FrontChannelLogoutURI is the path the provider calls to end a
	// session (front-channel logout).
	// +optional
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=@/-]*$`
	FrontChannelLogoutURI *string `json:"frontChannelLogoutURI,omitempty"`

	// TokenHint sends the ID token to the provider's logout endpoint
	// (id_token_hint).
	// +optional
	TokenHint *bool `json:"tokenHint,omitempty"`
}

// JWTKeySource is where the keys that verify tokens come from.
//
// +kubebuilder:validation:Enum=File;Remote
type JWTKeySource string

// Key sources.
const (
	// JWTKeySourceFile: a JSON Web Key Set in a Secret.
	JWTKeySourceFile JWTKeySource = "File"
	// JWTKeySourceRemote: a JSON Web Key Set fetched from a URL.
	JWTKeySourceRemote JWTKeySource = "Remote"
)

// JWTAuth is JSON Web Token authentication: a request carries a signed
// token, verified with the keys of a JSON Web Key Set.
//
// +kubebuilder:validation:XValidation:message="source File requires spec.file to be set.",rule="self.source != 'File' || has(self.file)"
// +kubebuilder:validation:XValidation:message="source File must not set spec.remote.",rule="self.source != 'File' || !has(self.remote)"
// +kubebuilder:validation:XValidation:message="source Remote requires spec.remote to be set.",rule="self.source != 'Remote' || has(self.remote)"
// +kubebuilder:validation:XValidation:message="source Remote must not set spec.file.",rule="self.source != 'Remote' || !has(self.file)"
type JWTAuth struct {
	// File is the Secret holding the key set; set when source is File.
	// +optional
	File *JWTFileKeySource `json:"file,omitempty"`

	// KeyCache is how long keys are kept once read: for a Remote source,
	// how often the data plane fetches the key set again (1m when unset,
	// taken within 5s and 24h); a File source's keys change with its
	// Secret.
	// +optional
	KeyCache *Duration `json:"keyCache,omitempty"`

	// Remote is where the key set is fetched; set when source is Remote.
	// +optional
	Remote *JWTRemoteKeySource `json:"remote,omitempty"`

	// Authorization are claims the token must carry; a token that does not
	// is answered 401, as NGINX Gateway Fabric does.
	// +optional
	Authorization *Authorization `json:"authorization,omitempty"`

	// Leeway is the clock skew allowed when checking the exp and nbf
	// claims; 0s by default.
	// +optional
	Leeway *Duration `json:"leeway,omitempty"`

	// Realm is the protection space named in the WWW-Authenticate header
	// of a 401 answer.
	Realm string `json:"realm"`

	// Source is where the keys come from: File or Remote.
	Source JWTKeySource `json:"source"`
}

// JWTFileKeySource is a key set held in a Secret.
type JWTFileKeySource struct {
	// SecretRef is the Secret, in the filter's namespace, whose key "auth"
	// holds the key set: a JSON Web Key Set ({"keys": [...]}) of RSA keys
	// (2048 to 8192 bits), EC keys (P-256, P-384) and HMAC secrets (at
	// least the hash's size). A key that cannot verify signatures is
	// refused and named in the filter's status.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// JWTRemoteKeySource is a key set fetched over HTTPS.
type JWTRemoteKeySource struct {
	// URI is the key set's https URL. Each data-plane pod fetches it in
	// the background, never for a request; until it has the set, the
	// filter's requests are answered 503.
	// +kubebuilder:validation:Pattern=`^https:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?(\/[a-zA-Z0-9._~:\/?@!&'()*+,=-]*)?$`
	URI string `json:"uri"`

	// CACertificateRefs are Secrets, in the filter's namespace, whose key
	// "ca.crt" holds CA certificates (PEM) that verify the key set's
	// server; at most one. Unset: the system's CA bundle.
	// +optional
	// +kubebuilder:validation:MaxItems=1
	CACertificateRefs []LocalObjectReference `json:"caCertificateRefs,omitempty"`
}

// RequireType says whether all requirements must hold, or any one.
//
// +kubebuilder:validation:Enum=All;Any
type RequireType string

// Require types.
const (
	RequireTypeAll RequireType = "All"
	RequireTypeAny RequireType = "Any"
)

// ClaimMatchType is how a claim's value is compared.
//
// +kubebuilder:validation:Enum=Exact;Regex
type ClaimMatchType string

// Claim match types.
const (
	ClaimMatchTypeExact ClaimMatchType = "Exact"
	ClaimMatchTypeRegex ClaimMatchType = "Regex"
)

// Authorization are the claims a token must carry to be let through.
type Authorization struct {
	// Require says whether every rule must hold (All) or one (Any).
	// +optional
	// +kubebuilder:default=Any
	Require *RequireType `json:"require,omitempty"`

	// Rules are the rules, each about a set of claims.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Rules []AuthorizationRule `json:"rules"`
}

// AuthorizationRule is a set of claims and whether a token must satisfy
// all of them or one.
//
// +kubebuilder:validation:XValidation:message="claim names must be unique within a rule",rule="self.claims.all(c, self.claims.exists_one(d, d.name == c.name))"
type AuthorizationRule struct {
	// Require says whether every claim must match (All) or one (Any).
	// +optional
	// +kubebuilder:default=Any
	Require *RequireType `json:"require,omitempty"`

	// Claims are the claims and the values they must have.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Claims []Claim `json:"claims"`
}

// Claim is a claim of a token and the values it may have.
type Claim struct {
	// ProxySetHeader is a request header, sent to the backend, that carries
	// the claim's value.
	// +optional
	// +kubebuilder:validation:Pattern=`^[-A-Za-z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	ProxySetHeader *string `json:"proxySetHeader,omitempty"`

	// Name is the claim's name in the token.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_/-]+$`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Match is how values are compared: Exact, or Regex (a regular
	// expression).
	// +optional
	// +kubebuilder:default=Exact
	Match ClaimMatchType `json:"match,omitempty"`

	// Values are the values the claim may have; matching one is enough.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[^\n\r;#\$\{\}\|&><'"]+$`
	// +kubebuilder:validation:items:MaxLength=256
	Values []string `json:"values"`
}

// AuthenticationFilterStatus is what each controller made of the filter.
type AuthenticationFilterStatus struct {
	// Controllers are the controllers that read the filter, each with its
	// conditions.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Controllers []ControllerStatus `json:"controllers,omitempty"`
}

// Conditions of an AuthenticationFilter.
const (
	// AuthenticationFilterConditionAccepted says whether the filter is
	// valid: its fields, and for Basic the Secret and every line of its
	// htpasswd file. Reasons Accepted and Invalid.
	AuthenticationFilterConditionAccepted = "Accepted"
	// AuthenticationFilterConditionProgrammed is set, False, on a valid
	// filter the data plane cannot enforce (OIDC): the rules that use it
	// answer 500. Reason RequiresNGINXPlus.
	AuthenticationFilterConditionProgrammed = "Programmed"

	AuthenticationFilterReasonAccepted = "Accepted"
	AuthenticationFilterReasonInvalid  = "Invalid"
	// AuthenticationFilterReasonNotImplemented: Gatewall does not enforce
	// this type on NGINX OSS yet.
	AuthenticationFilterReasonNotImplemented = "NotImplemented"
	// AuthenticationFilterReasonRequiresNGINXPlus: only a module of NGINX
	// Plus enforces this type.
	AuthenticationFilterReasonRequiresNGINXPlus = "RequiresNGINXPlus"
)

func init() {
	SchemeBuilder.Register(&AuthenticationFilter{}, &AuthenticationFilterList{})
}
