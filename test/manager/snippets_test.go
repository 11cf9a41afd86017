package manager_test

import (
	"context"
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
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// snippetsObjects are a snippets scenario of the shape NGF's guide uses, in ns, on the Gateway gw of
// class class: a route whose rule names the SnippetsFilter, and the
// SnippetsPolicy on the Gateway.
func snippetsObjects(ns, class string) []client.Object {
	gw := gateway(ns, "gw")
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(class)
	route := httpRoute(ns, "orders", "gw", "app")
	route.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef,
		ExtensionRef: &gatewayv1.LocalObjectReference{Group: "gateway.nginx.org", Kind: "SnippetsFilter", Name: "get-only"}}}
	return []client.Object{
		service(ns, "app"), endpointSlice(ns, "app", "10.1.3.10"), gw, route,
		&v1alpha1.SnippetsFilter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "get-only"},
			Spec: v1alpha1.SnippetsFilterSpec{Snippets: []v1alpha1.Snippet{
				{Context: v1alpha1.NginxContextHTTPServerLocation, Value: "limit_except GET {\n  deny all;\n}\n"}}}},
		&v1alpha1.SnippetsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one-per-client"},
			Spec: v1alpha1.SnippetsPolicySpec{
				TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
				Snippets: []v1alpha1.Snippet{
					{Context: v1alpha1.NginxContextHTTP, Value: "limit_conn_zone $binary_remote_addr zone=perclient:10m;"},
					{Context: v1alpha1.NginxContextHTTPServerLocation, Value: "limit_conn perclient 1;"},
				}}},
	}
}

// snippetsStatuses are, for one controller, the SnippetsFilter's
// Accepted, the SnippetsPolicy's Accepted on gw, and the route's
// ResolvedRefs, each as "Status/Reason", with their messages.
func snippetsStatuses(ns, controller string) (string, string, error) {
	ctx := context.Background()
	f := &v1alpha1.SnippetsFilter{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "get-only"}, f); err != nil {
		return "", "", err
	}
	filter, filterMsg := "<none>", ""
	for _, c := range f.Status.Controllers {
		if string(c.ControllerName) == controller {
			filter = condition(c.Conditions, "Accepted")
			if a := findCondition(c.Conditions, "Accepted"); a != nil {
				filterMsg = a.Message
			}
		}
	}
	p := &v1alpha1.SnippetsPolicy{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "one-per-client"}, p); err != nil {
		return "", "", err
	}
	policy, policyMsg := "<none>", ""
	for _, a := range p.Status.Ancestors {
		if string(a.ControllerName) == controller && string(a.AncestorRef.Name) == "gw" {
			policy = condition(a.Conditions, "Accepted")
			if c := findCondition(a.Conditions, "Accepted"); c != nil {
				policyMsg = c.Message
			}
		}
	}
	r := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "orders"}, r); err != nil {
		return "", "", err
	}
	refs, refsMsg := "<none>", ""
	for _, pa := range r.Status.Parents {
		if string(pa.ControllerName) == controller {
			refs = condition(pa.Conditions, "ResolvedRefs")
			if c := findCondition(pa.Conditions, "ResolvedRefs"); c != nil {
				refsMsg = c.Message
			}
		}
	}
	return fmt.Sprintf("filter %s, policy %s, route %s", filter, policy, refs), filterMsg + " | " + policyMsg + " | " + refsMsg, nil
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// TestSnippetsFollowTheFlag: the test's shared manager runs without
// --snippets: the snippets scenario gets statuses saying snippets are
// disabled in this installation, its orders rule answers 500 (never
// serves POST without the filter's limit_except), and no snippet reaches
// the configuration. A second manager, with --snippets, serves the same
// objects of its own class: the filter and the policy are accepted and
// their snippets are in its configuration.
func TestSnippetsFollowTheFlag(t *testing.T) {
	ns := namespace(t)
	if err := env.Client.Create(context.Background(), gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, snippetsObjects(ns, className)...)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	eventually(t, 20*time.Second, func() error {
		got, msg, err := snippetsStatuses(ns, manager.DefaultControllerName)
		if err != nil {
			return err
		}
		if want := "filter False/SnippetsDisabled, policy False/SnippetsDisabled, route False/InvalidFilter"; got != want {
			return fmt.Errorf("statuses %s (%s), want %s", got, msg, want)
		}
		if n := strings.Count(msg, "snippets are disabled in this installation"); n != 3 {
			return fmt.Errorf("%d of the 3 messages say snippets are disabled: %s", n, msg)
		}
		servers := heldFile(gw, config.ServersConfPath)
		if !strings.Contains(servers, "return 500;") || strings.Contains(servers, "snippets/") {
			return fmt.Errorf("the orders rule does not answer 500, or a snippet is included:\n%s", servers)
		}
		return nil
	})

	// A second installation, with --snippets.
	const controller, class = "gatewall.test/snippets", "snippets"
	held2 := dataplane.NewHeldFiles()
	mgr, err := manager.New(env.Config, manager.Options{
		ControllerName: controller, GatewayClassName: class, Namespace: manager.DefaultNamespace,
		MetricsAddr: "0", ProbeAddr: "0", DataPlane: held2, Snippets: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	ns2 := ns + "-on"
	create(t, namespaceObject(ns2), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: gatewayv1.GatewayClassSpec{ControllerName: controller}})
	create(t, snippetsObjects(ns2, class)...)
	gw2 := types.NamespacedName{Namespace: ns2, Name: "gw"}
	eventually(t, 30*time.Second, func() error {
		got, msg, err := snippetsStatuses(ns2, controller)
		if err != nil {
			return err
		}
		if want := "filter True/Accepted, policy True/Accepted, route True/ResolvedRefs"; got != want {
			return fmt.Errorf("statuses %s (%s), want %s", got, msg, want)
		}
		var files []string
		for _, f := range held2.Files(gw2) {
			if strings.Contains(string(f.Data), "limit_except GET") || strings.Contains(string(f.Data), "limit_conn_zone $binary_remote_addr") {
				files = append(files, f.Path)
			}
		}
		if len(files) != 2 {
			return fmt.Errorf("the snippets are in %v, want the filter's and the policy's files", files)
		}
		return nil
	})
}

func namespaceObject(name string) client.Object {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
