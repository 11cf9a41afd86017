package manager_test

import (
	"context"
	"crypto/elliptic"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/jwttest"
)

// filterConditions are this controller's conditions on an
// AuthenticationFilter, as "Type=Status/Reason" joined by spaces, and the
// Accepted message.
func filterConditions(key types.NamespacedName) (string, string, error) {
	f := &v1alpha1.AuthenticationFilter{}
	if err := env.Client.Get(context.Background(), key, f); err != nil {
		return "", "", err
	}
	for _, c := range f.Status.Controllers {
		if string(c.ControllerName) != manager.DefaultControllerName {
			continue
		}
		var parts []string
		msg := ""
		for _, cond := range c.Conditions {
			parts = append(parts, fmt.Sprintf("%s=%s/%s", cond.Type, cond.Status, cond.Reason))
			if cond.Type == "Accepted" {
				msg = cond.Message
			}
			if cond.ObservedGeneration != f.Generation {
				return "", "", fmt.Errorf("condition %s is of generation %d, not %d", cond.Type, cond.ObservedGeneration, f.Generation)
			}
		}
		return strings.Join(parts, " "), msg, nil
	}
	return "<none>", "", nil
}

// TestAuthenticationFilterFollowsItsSecret: a Basic filter's status and
// the Gateway's configuration follow the filter's Secret, whose content
// the manager reads from the API server (its cache holds Secrets'
// metadata only): a valid htpasswd is a file of users in the
// configuration; a line NGINX could not verify makes the filter invalid,
// naming the line and neither user nor hash, and the rule answer 500; a
// rotated Secret is a new file; a deleted filter leaves the rule
// answering 500, saying so.
func TestAuthenticationFilterFollowsItsSecret(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	route := httpRoute(ns, "r", "gw", "app")
	route.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
		ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: "AuthenticationFilter", Name: "basic"}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users"},
		Data: map[string][]byte{"auth": []byte("alice:{PLAIN}first\n")}}
	filter := &v1alpha1.AuthenticationFilter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "basic"},
		Spec: v1alpha1.AuthenticationFilterSpec{Type: v1alpha1.AuthTypeBasic,
			Basic: &v1alpha1.BasicAuth{SecretRef: v1alpha1.LocalObjectReference{Name: "users"}, Realm: "staff"}}}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.3.10"), gateway(ns, "gw"), route, secret, filter)
	gwKey, routeKey, filterKey := types.NamespacedName{Namespace: ns, Name: "gw"}, client.ObjectKeyFromObject(route), client.ObjectKeyFromObject(filter)
	usersFile := config.SecretsDir + "htpasswd_" + ns + "_users"
	resolvedRefs := func() (string, string, error) {
		parents, err := routeParentsFor(routeKey, "gw")
		if err != nil || len(parents) != 1 {
			return "", "", fmt.Errorf("route parents %v: %w", parents, err)
		}
		for _, c := range parents[0].Conditions {
			if c.Type == "ResolvedRefs" {
				return fmt.Sprintf("%s/%s", c.Status, c.Reason), c.Message, nil
			}
		}
		return "<none>", "", nil
	}
	expect := func(what, filterWant, refsWant, fileWant string, msgWant ...string) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			got, msg, err := filterConditions(filterKey)
			if err != nil {
				return err
			}
			if got != filterWant {
				return fmt.Errorf("%s: the filter is %s (%s), want %s", what, got, msg, filterWant)
			}
			for _, m := range msgWant {
				if !strings.Contains(msg, m) {
					return fmt.Errorf("%s: the filter's message %q does not say %q", what, msg, m)
				}
			}
			refs, refsMsg, err := resolvedRefs()
			if err != nil {
				return err
			}
			if refs != refsWant {
				return fmt.Errorf("%s: the route's ResolvedRefs is %s (%s), want %s", what, refs, refsMsg, refsWant)
			}
			if f := heldFile(gwKey, usersFile); f != fileWant {
				return fmt.Errorf("%s: the file of users is %q, want %q", what, f, fileWant)
			}
			return nil
		})
	}
	expect("a valid Secret", "Accepted=True/Accepted", "True/ResolvedRefs", "alice:{PLAIN}first\n", "holds 1 users")

	update := func(data string) {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), s); err != nil {
			t.Fatal(err)
		}
		s.Data["auth"] = []byte(data)
		if err := env.Client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	update("alice:{PLAIN}first\nbob-the-user:$2b$14$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG\n")
	expect("a line NGINX would verify too slowly", "Accepted=False/Invalid", "False/InvalidFilter", "", "line 2", "cost 14")
	_, msg, err := filterConditions(filterKey)
	if err != nil || strings.Contains(msg, "bob-the-user") || strings.Contains(msg, "abcdefghij") {
		t.Errorf("the filter's status shows a user or a hash: %q (%v)", msg, err)
	}
	if f := heldFile(gwKey, config.ServersConfPath); !strings.Contains(f, "return 500;") || strings.Contains(f, "auth_basic") {
		t.Errorf("the rule is not answering 500:\n%s", f)
	}

	update("alice:{PLAIN}rotated\n")
	expect("a rotated Secret", "Accepted=True/Accepted", "True/ResolvedRefs", "alice:{PLAIN}rotated\n")

	if err := env.Client.Delete(ctx, filter); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		refs, refsMsg, err := resolvedRefs()
		if err != nil {
			return err
		}
		if refs != "False/InvalidFilter" || !strings.Contains(refsMsg, "AuthenticationFilter "+ns+"/basic not found") {
			return fmt.Errorf("after deleting the filter, ResolvedRefs is %s (%s)", refs, refsMsg)
		}
		if f := heldFile(gwKey, usersFile); f != "" {
			return fmt.Errorf("the file of users is still rendered: %q", f)
		}
		return nil
	})
}

// TestJWTFilterFollowsItsSecret: a JWT filter's status and the Gateway's
// policies file follow the key set of the filter's Secret: its keys in the
// file, a weak key refused and named while the others verify, a set of
// weak keys only making the filter invalid and the rule answer 500, a
// rotated set its new keys.
func TestJWTFilterFollowsItsSecret(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	route := httpRoute(ns, "r", "gw", "app")
	route.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
		ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: "AuthenticationFilter", Name: "jwt"}}}
	first, weak, rotated := jwttest.EC("first", elliptic.P256()), jwttest.RSA("weak", 1024), jwttest.EC("rotated", elliptic.P384())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jwks"},
		Data: map[string][]byte{"auth": jwttest.JWKS([]jwttest.Key{first})}}
	filter := &v1alpha1.AuthenticationFilter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jwt"},
		Spec: v1alpha1.AuthenticationFilterSpec{Type: v1alpha1.AuthTypeJWT, JWT: &v1alpha1.JWTAuth{Realm: "api", Source: v1alpha1.JWTKeySourceFile,
			File: &v1alpha1.JWTFileKeySource{SecretRef: v1alpha1.LocalObjectReference{Name: "jwks"}}}}}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.3.11"), gateway(ns, "gw"), route, secret, filter)
	gwKey, filterKey := types.NamespacedName{Namespace: ns, Name: "gw"}, client.ObjectKeyFromObject(filter)
	expect := func(what, filterWant, kidWant string, msgWant ...string) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			got, msg, err := filterConditions(filterKey)
			if err != nil {
				return err
			}
			if got != filterWant {
				return fmt.Errorf("%s: the filter is %s (%s), want %s", what, got, msg, filterWant)
			}
			for _, m := range msgWant {
				if !strings.Contains(msg, m) {
					return fmt.Errorf("%s: the filter's message %q does not say %q", what, msg, m)
				}
			}
			policies := heldFile(gwKey, config.JWTPoliciesFile)
			switch {
			case kidWant == "" && policies != "":
				return fmt.Errorf("%s: the policies file is still rendered: %s", what, policies)
			case kidWant != "" && !strings.Contains(policies, `"kid":"`+kidWant+`"`):
				return fmt.Errorf("%s: the policies file does not hold key %s: %s", what, kidWant, policies)
			}
			return nil
		})
	}
	expect("a valid Secret", "Accepted=True/Accepted", "first", "holds 1 keys")
	update := func(keys ...jwttest.Key) {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), s); err != nil {
			t.Fatal(err)
		}
		s.Data["auth"] = jwttest.JWKS(keys)
		if err := env.Client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	update(first, weak)
	expect("a weak key beside", "Accepted=True/Accepted", "first", "holds 1 keys", `key 2 (kid "weak"): an RSA key of 1024 bits`)
	update(weak)
	expect("a weak key alone", "Accepted=False/Invalid", "", "no key of the set can verify tokens")
	if f := heldFile(gwKey, config.ServersConfPath); !strings.Contains(f, "return 500;") || strings.Contains(f, "gatewall.jwt") {
		t.Errorf("the rule is not answering 500:\n%s", f)
	}
	update(rotated)
	expect("a rotated set", "Accepted=True/Accepted", "rotated", "holds 1 keys")
}
