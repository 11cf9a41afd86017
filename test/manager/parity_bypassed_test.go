package manager_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/test/testenv"
)

// bypassedRefused are, by golden, the objects the API server refuses
// whatever its CRDs say (metadata names, built-in kinds).
var bypassedRefused = map[string][]string{
	"endpoints": {"EndpointSlice default/mixed-1", "EndpointSlice default/mixed-2"},
	"injection": {"EndpointSlice default/app6-slice", "HTTPRoute default/evil;}"},
	"unreadable-objects": {
		"EndpointSlice default/app-2", "Secret default/bad-cert", "Service default/", "Service default/big-port",
	},
}

// unknownFieldsAsTypeErrors is the fixup of unreadable-objects: render
// decodes manifests strictly, refusing an unknown field, while the manager,
// like every client, ignores one (a CRD newer than Gatewall's Go types
// stores fields they lack, with defaults: refusing them would refuse every
// object). The golden's objects with an unknown field get a type error
// instead, so that both sides refuse them.
func unknownFieldsAsTypeErrors(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	set := func(value any, fields ...string) {
		if err := unstructured.SetNestedField(u.Object, value, fields...); err != nil {
			t.Fatal(err)
		}
	}
	switch id(u) {
	case "GatewayClass bad-class":
		unstructured.RemoveNestedField(u.Object, "spec", "parametersRefs")
		set("np", "spec", "parametersRef")
	case "GRPCRoute default/bad-grpc":
		set([]any{map[string]any{"backendRefs": []any{map[string]any{"name": "app", "port": int64(80), "weight": "two"}}}}, "spec", "rules")
	case "ReferenceGrant shared/routes":
		unstructured.RemoveNestedField(u.Object, "spec", "until")
		set([]any{map[string]any{"group": "", "kind": int64(7)}}, "spec", "to")
	}
}

// bypassedCases are every golden. The Services of upstreamsettings and
// upstreamsettings-tlsroute lose their cluster IPs, as in TestStatusParity
// (the fixups of its cases for built-in kinds); the objects of
// unreadable-objects with unknown fields get type errors instead
// (unknownFieldsAsTypeErrors).
func bypassedCases(t *testing.T) []parityCase {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "internal", "render", "testdata")
	ins, err := filepath.Glob(filepath.Join(dir, "*.in.yaml"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no goldens in %s: %v", dir, err)
	}
	var cases []parityCase
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		c := parityCase{name: name, refused: bypassedRefused[name]}
		if name == "unreadable-objects" {
			c.unreadable, c.fixup = true, unknownFieldsAsTypeErrors
		}
		for _, pc := range parityCases {
			// Fixups for built-in kinds (cluster IPs the API server
			// allocates) hold whatever the CRDs say.
			if pc.name == name && pc.builtIn {
				c.fixup = pc.fixup
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// TestStatusParityBypassed is TestStatusParity for objects that bypassed
// the API server's rules, on every golden: with every Gateway API and
// Gatewall CRD's spec schema loosened, as an old or tampered CRD would
// have it, the API server stores the goldens' objects as written (no
// schema, no CEL rule, no default), and the manager, which re-validates
// what it reads, must say about each exactly what `gatewall render` says.
//
// Objects that do not decode into their Go types (unreadable-objects: a
// string where a number belongs) reach the manager as marked stubs, and
// must be reported as render reports them.
func TestStatusParityBypassed(t *testing.T) {
	cases := bypassedCases(t)
	explore := *parityGoldens != ""
	if explore {
		cases = nil
		for _, name := range strings.Split(*parityGoldens, ",") {
			cases = append(cases, parityCase{name: strings.TrimSpace(name)})
		}
	}
	loosenSpecSchemas(t)
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				runParity(t, c, explore)
			})
		}
	})
}

// loosenedGroups are the API groups whose CRDs loosenSpecSchemas loosens.
var loosenedGroups = map[string]bool{"gateway.networking.k8s.io": true, "gateway.nginx.org": true}

// loosenSpecSchemas replaces the spec schema of every version of the
// Gateway API's and Gatewall's CRDs by one that admits anything, until the
// test ends, and waits until the API server admits a spec its schema
// refuses (and, at the end, refuses it again).
func loosenSpecSchemas(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := env.Client.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if loosenedGroups[crd.Spec.Group] {
			crds = append(crds, crd)
		}
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	if len(crds) == 0 {
		t.Fatal("no Gateway API or Gatewall CRDs installed")
	}
	probes := make([]*unstructured.Unstructured, 0, len(crds))
	for i := range crds {
		p, err := schemaProbe(&crds[i])
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	// The probes are refused first: they prove the loosening, not a schema
	// that never refused them.
	waitProbes(t, probes, false)
	setSpecSchemas(t, crds, func(_, _ string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	})
	t.Cleanup(func() {
		orig := map[string]map[string]apiextensionsv1.JSONSchemaProps{}
		for _, crd := range crds {
			orig[crd.Name] = map[string]apiextensionsv1.JSONSchemaProps{}
			for _, v := range crd.Spec.Versions {
				orig[crd.Name][v.Name] = v.Schema.OpenAPIV3Schema.Properties["spec"]
			}
		}
		setSpecSchemas(t, crds, func(crd, version string) apiextensionsv1.JSONSchemaProps { return orig[crd][version] })
		waitProbes(t, probes, false)
	})
	waitProbes(t, probes, true)
}

// setSpecSchemas updates each CRD (as it is now on the API server) with
// the spec schema f gives for each of its versions.
func setSpecSchemas(t *testing.T, crds []apiextensionsv1.CustomResourceDefinition, f func(crd, version string) apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	ctx := context.Background()
	for _, crd := range crds {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: crd.Name}, cur); err != nil {
			t.Error(err)
			continue
		}
		for _, v := range cur.Spec.Versions {
			v.Schema.OpenAPIV3Schema.Properties["spec"] = f(crd.Name, v.Name)
		}
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Errorf("updating CRD %s: %v", crd.Name, err)
		}
	}
}

// schemaProbe is an object of the CRD's storage version whose spec the
// strict schema refuses: its first typed spec field holds a value of
// another type.
func schemaProbe(crd *apiextensionsv1.CustomResourceDefinition) (*unstructured.Unstructured, error) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		names := make([]string, 0, len(spec.Properties))
		for name := range spec.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			var wrong any
			switch spec.Properties[name].Type {
			case "string":
				wrong = int64(5)
			case "integer", "boolean", "array", "object":
				wrong = "not of its type"
			default:
				continue
			}
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{name: wrong}}}
			u.SetAPIVersion(crd.Spec.Group + "/" + v.Name)
			u.SetKind(crd.Spec.Names.Kind)
			u.SetName("schema-probe")
			if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
				u.SetNamespace("default")
			}
			return u, nil
		}
	}
	return nil, fmt.Errorf("CRD %s has no typed spec field to probe its schema with", crd.Name)
}

// waitProbes waits until the API server admits every probe (admitted) or
// refuses every one.
func waitProbes(t *testing.T, probes []*unstructured.Unstructured, admitted bool) {
	t.Helper()
	eventually(t, 20*time.Second, func() error {
		for _, p := range probes {
			err := env.Client.Create(context.Background(), p.DeepCopy(), client.DryRunAll)
			if admitted && err != nil {
				return fmt.Errorf("the loosened %s schema is not in effect yet: %w", p.GetKind(), err)
			}
			if !admitted && err == nil {
				return fmt.Errorf("the API server admits a %s whose spec its schema refuses", p.GetKind())
			}
		}
		return nil
	})
}
