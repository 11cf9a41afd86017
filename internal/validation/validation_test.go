package validation_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/apicases"
)

func validate(o client.Object) field.ErrorList {
	switch o := o.(type) {
	case *v1alpha1.ProxySettingsPolicy:
		return validation.ProxySettingsPolicy(o)
	case *v1alpha1.WAFGatewayBindingPolicy:
		return validation.WAFGatewayBindingPolicy(o)
	case *v1alpha1.ClientSettingsPolicy:
		return validation.ClientSettingsPolicy(o)
	case *v1alpha1.RateLimitPolicy:
		return validation.RateLimitPolicy(o)
	case *v1alpha1.UpstreamSettingsPolicy:
		return validation.UpstreamSettingsPolicy(o)
	case *v1alpha2.NginxProxy:
		return validation.NginxProxy(o)
	case *v1alpha1.SnippetsFilter:
		return validation.SnippetsFilter(o)
	case *v1alpha1.SnippetsPolicy:
		return validation.SnippetsPolicy(o)
	case *v1alpha1.AuthenticationFilter:
		return validation.AuthenticationFilter(o)
	}
	panic(fmt.Sprintf("no validation for %T", o))
}

// TestCases runs the table the API server is tested with through the Go
// re-validation: the same objects must be accepted or rejected, for the same
// field, with the same words.
func TestCases(t *testing.T) {
	for _, c := range apicases.All() {
		t.Run(c.Name, func(t *testing.T) {
			errs := validate(c.Object)
			if c.Accepted() {
				if len(errs) > 0 {
					t.Fatalf("rejected: %v", errs.ToAggregate())
				}
				return
			}
			for _, e := range errs {
				if e.Field == c.Field && strings.Contains(e.Error(), c.Message) {
					return
				}
			}
			t.Fatalf("want an error for %s containing %q, got: %v", c.Field, c.Message, errs.ToAggregate())
		})
	}
}

// TestCRDPatternsMatchGo checks that every pattern in the generated CRDs is
// one of the Go constants this package validates with, so markers and Go
// cannot drift apart.
func TestCRDPatternsMatchGo(t *testing.T) {
	known := map[string]bool{
		validation.HashMethodKeyPattern:     true,
		validation.SizePattern:              true,
		validation.DNS1123SubdomainPattern:  true,
		validation.DNS1123LabelPattern:      true,
		validation.SecurityLogFilePattern:   true,
		validation.SyslogServerPattern:      true,
		validation.ImageRepositoryPattern:   true,
		validation.ImageTagPattern:          true,
		validation.InfrastructureKeyPattern: true,
		validation.TopologyKeyPattern:       true,
		validation.ByteSizePattern:          true,
		validation.DurationPattern:          true,
		validation.GatewayDurationPattern:   true,
		validation.RatePattern:              true,
		validation.RateLimitKeyPattern:      true,
		validation.HTTPSURLPattern:          true,
		validation.RedirectURIPattern:       true,
		validation.PostLogoutURIPattern:     true,
		validation.LogoutPathPattern:        true,
		validation.ClaimHeaderPattern:       true,
		validation.ClaimNamePattern:         true,
		validation.ClaimValuePattern:        true,
		validation.ServerTokensPattern:      true,
		validation.AccessLogFormatPattern:   true,
		validation.MimeTypePattern:          true,
		validation.TelemetryEndpointPattern: true,
		validation.ServiceNamePattern:       true,
		validation.SpanAttributePattern:     true,
		validation.ProbePathPattern:         true,
	}
	files, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs found: %v", err)
	}
	used := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			walk(v.Schema.OpenAPIV3Schema, "", func(path, pattern string) {
				if strings.HasPrefix(path, ".status.") ||
					strings.HasSuffix(path, ".targetRefs.group") || strings.HasSuffix(path, ".targetRefs.kind") ||
					strings.HasSuffix(path, ".targetRef.group") || strings.HasSuffix(path, ".targetRef.kind") ||
					strings.Contains(path, ".resources.") || strings.Contains(path, ".pod.volumes.") ||
					strings.Contains(path, ".autoscaling.metrics.") {
					return // patterns of upstream types (Gateway API, meta/v1, core/v1, autoscaling/v2)
				}
				if !known[pattern] {
					t.Errorf("%s: %s has pattern %q, which no Go constant validates", crd.Name, path, pattern)
				}
				used[pattern] = true
			})
		}
	}
	var unused []string
	for p := range known {
		if !used[p] {
			unused = append(unused, p)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("Go patterns used by no CRD: %v", unused)
	}
}

func walk(s *apiextensionsv1.JSONSchemaProps, path string, visit func(path, pattern string)) {
	if s == nil {
		return
	}
	if s.Pattern != "" {
		visit(path, s.Pattern)
	}
	for name, p := range s.Properties {
		walk(&p, path+"."+name, visit)
	}
	if s.Items != nil {
		walk(s.Items.Schema, path, visit)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "4k": 4096, "4K": 4096, "1m": 1 << 20, "1M": 1 << 20, "99999999999m": 99999999999 << 20} {
		got, err := validation.ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "1g", "1.5k", "-1", "1 k", "999999999999m"} {
		if _, err := validation.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", in)
		}
	}
}
