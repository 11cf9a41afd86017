package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/status"
)

// TestChannels: what Serves says of each channel is what the channel's
// CRDs of the Gateway API release Gatewall is built with carry, for every
// kind and field a supported feature needs.
func TestChannels(t *testing.T) {
	standard, err := localrun.GatewayAPICRDDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, channel := range []string{ChannelStandard, ChannelExperimental} {
		crds := readCRDs(t, filepath.Join(filepath.Dir(standard), channel))
		serves, err := Serves(channel)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range status.Requirements() {
			crd, ok := crds[r.Kind]
			has := ok && (r.Field == "" || schemaHas(crd, r.Field))
			if serves(r) != has {
				t.Errorf("%s channel: Serves says %v of %+v, its CRDs %v", channel, serves(r), r, has)
			}
		}
	}
	if _, err := Serves("alpha"); err == nil {
		t.Error("an unknown channel is accepted")
	}
}

// readCRDs reads a channel's CRDs by kind (their v1 version's schema).
func readCRDs(t *testing.T, dir string) map[string]*apiextensionsv1.JSONSchemaProps {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue // not a CRD (a kustomization, a policy)
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1" && v.Served && v.Schema != nil {
				out[crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return out
}

// schemaHas says whether a schema has a field path ("spec.rules[].retry").
func schemaHas(s *apiextensionsv1.JSONSchemaProps, path string) bool {
	for _, part := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(part, "[]")
		p, ok := s.Properties[name]
		if !ok {
			return false
		}
		s = &p
		if list {
			if s.Items == nil || s.Items.Schema == nil {
				return false
			}
			s = s.Items.Schema
		}
	}
	return true
}
