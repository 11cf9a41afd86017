package graph

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// KindAuthenticationFilter is the kind of NGINX Gateway Fabric's
// AuthenticationFilter, which route rules name in ExtensionRef filters.
const KindAuthenticationFilter = "AuthenticationFilter"

var authenticationFilterKind = &ExtensionFilterKind{
	Group:   extensionGroup,
	Kind:    KindAuthenticationFilter,
	New:     func() client.Object { return &v1alpha1.AuthenticationFilter{} },
	NewList: func() client.ObjectList { return &v1alpha1.AuthenticationFilterList{} },
	Items: func(l client.ObjectList) []client.Object {
		items := l.(*v1alpha1.AuthenticationFilterList).Items
		out := make([]client.Object, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out
	},
	Secrets: authenticationSecrets,
	Resolve: resolveAuthentication,
	Controllers: func(o client.Object) *[]v1alpha1.ControllerStatus {
		return &o.(*v1alpha1.AuthenticationFilter).Status.Controllers
	},
	typ: reflect.TypeOf(&v1alpha1.AuthenticationFilter{}),
}

// Authentication is how NGINX authenticates a rule's requests: a valid
// AuthenticationFilter of a type the data plane enforces. The renderer
// writes each type with a function of its own.
type Authentication struct {
	// Filter names the AuthenticationFilter.
	Filter ObjectRef
	Type   v1alpha1.AuthType
	// Basic is set for type Basic, JWT for type JWT.
	Basic *BasicAuth
	JWT   *JWTAuth
}

// BasicAuth is HTTP Basic authentication, checked.
type BasicAuth struct {
	// Realm is the realm as the filter has it (validation.Realm).
	Realm string
	// Secret holds the htpasswd file.
	Secret types.NamespacedName
	// Users is the data plane's htpasswd file: every line of the Secret's
	// checked (validation.Htpasswd), written anew.
	Users []byte
}

// authNotEnforced are the types the data plane does not enforce, with the
// reason of the filter's Programmed=False and why. A type Gatewall comes
// to enforce leaves this table, and gets a function in the renderer.
var authNotEnforced = map[v1alpha1.AuthType]struct{ reason, why string }{
	v1alpha1.AuthTypeOIDC: {v1alpha1.AuthenticationFilterReasonRequiresNGINXPlus,
		"OpenID Connect needs NGINX Plus's OpenID Connect module (auth_oidc), which the data plane's NGINX OSS does not have"},
}

// authenticationSecrets are the Secrets an AuthenticationFilter reads:
// Basic's htpasswd, JWT's key set or the CAs of its remote one.
func authenticationSecrets(o client.Object) []types.NamespacedName {
	f := o.(*v1alpha1.AuthenticationFilter)
	var out []types.NamespacedName
	add := func(name string) {
		if name != "" {
			out = append(out, key(f.Namespace, name))
		}
	}
	switch {
	case f.Spec.Type == v1alpha1.AuthTypeBasic && f.Spec.Basic != nil:
		add(f.Spec.Basic.SecretRef.Name)
	case f.Spec.Type == v1alpha1.AuthTypeJWT && f.Spec.JWT != nil:
		if j := f.Spec.JWT; j.File != nil {
			add(j.File.SecretRef.Name)
		}
		if j := f.Spec.JWT; j.Remote != nil {
			for _, r := range j.Remote.CACertificateRefs {
				add(r.Name)
			}
		}
	}
	return out
}

// resolveAuthentication checks an AuthenticationFilter of the input: its
// fields, and for Basic its Secret and every line of the htpasswd file,
// for JWT its keys and authorization (jwt.go).
func resolveAuthentication(in *Input, o client.Object) *ExtensionFilter {
	f := o.(*v1alpha1.AuthenticationFilter)
	ef := &ExtensionFilter{Ref: ObjectRef{Kind: KindAuthenticationFilter, Key: key(f.Namespace, f.Name)}}
	invalid := func(format string, args ...any) *ExtensionFilter {
		ef.Error, ef.Invalid = fmt.Sprintf(format, args...), true
		return ef
	}
	if errs := validation.AuthenticationFilter(f); len(errs) > 0 {
		return invalid("%s", errs.ToAggregate())
	}
	if n, ok := authNotEnforced[f.Spec.Type]; ok {
		ef.Error, ef.Reason = n.why, n.reason
		ef.Authentication = &Authentication{Filter: ef.Ref, Type: f.Spec.Type}
		return ef
	}
	if f.Spec.Type == v1alpha1.AuthTypeJWT {
		j, detail, msg := resolveJWT(in, f)
		if msg != "" {
			return invalid("%s", msg)
		}
		ef.Authentication = &Authentication{Filter: ef.Ref, Type: v1alpha1.AuthTypeJWT, JWT: j}
		ef.Detail = detail
		return ef
	}
	b := f.Spec.Basic
	if err := validation.Realm(b.Realm); err != nil {
		return invalid("spec.basic.realm: %v", err)
	}
	secret := key(f.Namespace, b.SecretRef.Name)
	if err := validation.ObjectReference(secret.Namespace, secret.Name); err != nil {
		return invalid("spec.basic.secretRef: %v", err)
	}
	s := in.Secrets[secret]
	if s == nil {
		return invalid("spec.basic.secretRef: %s", in.missing("Secret", secret))
	}
	data, ok := s.Data[v1alpha1.BasicAuthSecretKey]
	if !ok {
		return invalid("spec.basic.secretRef: Secret %s has no key %q (the htpasswd file)", secret, v1alpha1.BasicAuthSecretKey)
	}
	users, err := validation.Htpasswd(data)
	if err != nil {
		// Names lines only: never a user or a hash.
		return invalid("spec.basic.secretRef: Secret %s key %q: %v", secret, v1alpha1.BasicAuthSecretKey, err)
	}
	ef.Authentication = &Authentication{Filter: ef.Ref, Type: v1alpha1.AuthTypeBasic,
		Basic: &BasicAuth{Realm: b.Realm, Secret: secret, Users: validation.HtpasswdFile(users)}}
	ef.Detail = fmt.Sprintf("Secret %s holds %d users", secret, len(users))
	return ef
}
