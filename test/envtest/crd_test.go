package envtest

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/discovery"
)

// installedCRDs returns the CRDs of these API groups that the API server has
// (envtest installs every CRD under config/crd/bases and config/plm/crd).
func installedCRDs(t *testing.T, groups ...string) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := env.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if slices.Contains(groups, crd.Spec.Group) {
			crds = append(crds, crd)
		}
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds
}

// TestCRDFieldsDocumented: every field of Gatewall's CRDs and of the PLM
// stand-ins has a description in the OpenAPI v3 the API server publishes,
// which is what `kubectl explain` shows. Referenced built-in types
// (ObjectMeta) are documented upstream and not walked.
func TestCRDFieldsDocumented(t *testing.T) {
	crds := installedCRDs(t, "gateway.nginx.org", "appprotect.f5.com", "waf.f5.com")
	if len(crds) < 9 {
		t.Fatalf("found %d CRDs, want Gatewall's 5 and the 4 PLM stand-ins", len(crds))
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			gv := crd.Spec.Group + "/" + v.Name
			t.Run(crd.Spec.Names.Kind+"."+gv, func(t *testing.T) {
				schema := publishedSchema(t, dc, gv, crd.Spec.Names.Kind)
				var undocumented []string
				walkDescriptions(schema, crd.Spec.Names.Kind, &undocumented)
				sort.Strings(undocumented)
				for _, f := range undocumented {
					t.Errorf("%s has no description (kubectl explain shows nothing)", f)
				}
			})
		}
	}
}

// publishedSchema returns the API server's OpenAPI v3 schema of a kind,
// waiting for the CRD to be published.
func publishedSchema(t *testing.T, dc *discovery.DiscoveryClient, gv, kind string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s := findSchema(t, dc, gv, kind); s != nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server publishes no OpenAPI v3 schema for %s %s", gv, kind)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func findSchema(t *testing.T, dc *discovery.DiscoveryClient, gv, kind string) map[string]any {
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := paths["apis/"+gv]
	if !ok {
		return nil
	}
	data, err := p.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	group, version, _ := strings.Cut(gv, "/")
	for _, s := range doc.Components.Schemas {
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == group && m["version"] == version && m["kind"] == kind {
				return s
			}
		}
	}
	return nil
}

// walkDescriptions appends the path of every property without a description.
func walkDescriptions(s map[string]any, path string, undocumented *[]string) {
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			*undocumented = append(*undocumented, path+"."+name)
		}
		walkDescriptions(p, path+"."+name, undocumented)
	}
	if items, ok := s["items"].(map[string]any); ok {
		walkDescriptions(items, path+"[]", undocumented)
	}
	if extra, ok := s["additionalProperties"].(map[string]any); ok {
		walkDescriptions(extra, path+"{}", undocumented)
	}
}

// TestCRDMetadata: the CRDs as installed carry what DESIGN pins. The
// policies are inherited GEP-713 policies in the gateway-api category; every
// Gatewall CRD has short names, a status subresource and print columns.
func TestCRDMetadata(t *testing.T) {
	policies := map[string]bool{
		"proxysettingspolicies.gateway.nginx.org":     true,
		"clientsettingspolicies.gateway.nginx.org":    true,
		"ratelimitpolicies.gateway.nginx.org":         true,
		"wafgatewaybindingpolicies.gateway.nginx.org": true,
	}
	crds := installedCRDs(t, "gateway.nginx.org")
	for name := range policies {
		if !slices.ContainsFunc(crds, func(c apiextensionsv1.CustomResourceDefinition) bool { return c.Name == name }) {
			t.Errorf("no CRD %s is installed", name)
		}
	}
	for _, crd := range crds {
		t.Run(crd.Name, func(t *testing.T) {
			if policies[crd.Name] {
				if got := crd.Labels["gateway.networking.k8s.io/policy"]; got != "inherited" {
					t.Errorf("label gateway.networking.k8s.io/policy is %q, want inherited", got)
				}
				if !slices.Contains(crd.Spec.Names.Categories, "gateway-api") {
					t.Errorf("categories %v lack gateway-api", crd.Spec.Names.Categories)
				}
			}
			if len(crd.Spec.Names.ShortNames) == 0 {
				t.Error("no short names")
			}
			for _, v := range crd.Spec.Versions {
				if v.Subresources == nil || v.Subresources.Status == nil {
					t.Errorf("version %s has no status subresource", v.Name)
				}
				if len(v.AdditionalPrinterColumns) == 0 {
					t.Errorf("version %s has no print columns", v.Name)
				}
			}
		})
	}
}
