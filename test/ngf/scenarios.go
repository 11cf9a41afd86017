package ngf

import (
	"embed"
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gatewall/gatewall/internal/manifest"
)

//go:embed scenarios/*.yaml
var files embed.FS

// Scenario is Gatewall's scenario of the shape of one of NGF's examples.
type Scenario struct {
	// Name is the scenario's file in scenarios/, without ".yaml".
	Name string
	// Example is NGF's examples/ folder whose shape it follows, with the
	// variant when the folder holds several.
	Example string
	// Snippets says the scenario needs the manager's --snippets.
	Snippets bool
}

// Scenarios are one per NGF example but its WAF and AI-guardrails ones, in
// the order of issue 40's table (its examples/ folders, alphabetically).
var Scenarios = []Scenario{
	{Name: "advanced-routing", Example: "advanced-routing"},
	{Name: "basic-authentication", Example: "basic-authentication"},
	{Name: "basic-routing", Example: "cafe-example"},
	{Name: "client-settings-policy", Example: "client-settings-policy"},
	{Name: "cors-filter", Example: "cors-filter"},
	{Name: "cross-namespace-routing", Example: "cross-namespace-routing"},
	{Name: "external-authentication", Example: "external-authentication"},
	{Name: "externalname-service", Example: "externalname-service"},
	{Name: "grpc-exact-method", Example: "grpc-routing (exact method)"},
	{Name: "grpc-hostname", Example: "grpc-routing (hostnames)"},
	{Name: "grpc-headers", Example: "grpc-routing (headers)"},
	{Name: "request-headers", Example: "http-request-header-filter"},
	{Name: "response-headers", Example: "http-response-header-filter"},
	{Name: "https-termination", Example: "https-termination"},
	{Name: "proxy-settings-policy", Example: "proxy-settings-policy"},
	{Name: "rate-limit-policy", Example: "rate-limit-policy"},
	{Name: "secure-backend", Example: "secure-backend"},
	{Name: "snippets", Example: "snippets", Snippets: true},
	{Name: "tcp-routing", Example: "tcp-routing"},
	{Name: "traffic-splitting", Example: "traffic-splitting (unequal weights)"},
	{Name: "traffic-splitting-equal", Example: "traffic-splitting (equal weights)"},
	{Name: "udp-routing", Example: "udp-routing"},
	{Name: "upstream-settings-policy", Example: "upstream-settings-policy"},
}

// Objects are the scenario's objects. Namespaces are renamed by ns, given
// "default" for an object without one (as kubectl applies NGF's examples
// in the current namespace): metadata.namespace, a Namespace's name, and
// every "namespace" field of the specs (backendRefs, certificateRefs, a
// ReferenceGrant's from), so that a test can give each run namespaces of
// its own.
func Objects(name string, ns func(string) string) ([]*unstructured.Unstructured, error) {
	data, err := files.ReadFile(path.Join("scenarios", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	objs, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			o.SetName(ns(o.GetName()))
			continue
		}
		if o.GetNamespace() == "" {
			o.SetNamespace("default")
		}
		renameNamespaces(o.Object, ns)
	}
	return objs, nil
}

// renameNamespaces maps every string field named "namespace" below v.
func renameNamespaces(v any, ns func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "namespace" {
				v[k] = ns(s)
				continue
			}
			renameNamespaces(e, ns)
		}
	case []any:
		for _, e := range v {
			renameNamespaces(e, ns)
		}
	}
}

// Find returns the scenario of that name.
func Find(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
