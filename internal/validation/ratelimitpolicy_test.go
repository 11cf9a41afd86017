package validation_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

func TestParseRate(t *testing.T) {
	type rate struct {
		n         int64
		perMinute bool
	}
	for in, want := range map[string]rate{
		"1r/s": {1, false}, "10r/s": {10, false}, "30r/m": {30, true},
		"999999999r/s": {999999999, false}, "999999999r/m": {999999999, true},
	} {
		n, perMinute, err := validation.ParseRate(in)
		if err != nil || n != want.n || perMinute != want.perMinute {
			t.Errorf("ParseRate(%q) = %d, %v, %v; want %d, %v", in, n, perMinute, err, want.n, want.perMinute)
		}
	}
	for in, msg := range map[string]string{
		"0r/s": validation.MsgRateRange, "0r/m": validation.MsgRateRange, "00r/s": validation.MsgRateRange,
		"010r/s": validation.MsgRateRange, "1000000000r/s": validation.MsgRateRange,
		"": "should match", "r/s": "should match", "10r/h": "should match", "10 r/s": "should match",
		"10r/S": "should match", "-1r/s": "should match", "1.5r/s": "should match", "10r/s\n": "should match",
		"10": "should match", "10rps": "should match",
	} {
		n, _, err := validation.ParseRate(in)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRate(%q) = %d, %v; want an error containing %q", in, n, err, msg)
		}
	}
}

func TestRateLimitKeyVariable(t *testing.T) {
	for _, v := range []string{
		"binary_remote_addr", "remote_addr", "remote_user", "server_name", "host", "scheme",
		"request_method", "uri", "request_uri", "args", "server_port",
		"http_x_api_key", "http_X_Api_Key", "http_1", "arg_page", "arg__", "cookie_session",
	} {
		if !validation.RateLimitKeyVariable(v) {
			t.Errorf("RateLimitKeyVariable(%q) = false, want true", v)
		}
	}
	for _, v := range []string{
		"", "nosuch", "http_", "arg_", "cookie_", "http", "http_x-y", "remote_addr_", "Remote_Addr",
		"request_body", "request_id", "1", "$remote_addr", "sent_http_x", "upstream_addr", "http_ x",
	} {
		if validation.RateLimitKeyVariable(v) {
			t.Errorf("RateLimitKeyVariable(%q) = true, want false", v)
		}
	}
}

// keyVariablesRule returns the regular expression of the CRD's key rule
// about variables.
func keyVariablesRule(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../config/crd/bases/gateway.nginx.org_ratelimitpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	key := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["rateLimit"].
		Properties["local"].Properties["rules"].Items.Schema.Properties["key"]
	for _, r := range key.XValidations {
		if r.Message != validation.MsgKeyVariables {
			continue
		}
		re, ok := strings.CutPrefix(r.Rule, "self.matches('")
		if re, ok2 := strings.CutSuffix(re, "')"); ok && ok2 && !strings.ContainsAny(re, `'\`) {
			return re
		}
		t.Fatalf("the key rule %q is not self.matches('<regular expression>')", r.Rule)
	}
	t.Fatalf("the CRD's key has no rule with the message %q", validation.MsgKeyVariables)
	return ""
}

// TestRateLimitKeyVariablesMatchCRD: the CRD's key rule (one regular
// expression, which CEL runs with RE2 as Go does) draws the same line as
// RateLimitKeyVariable, and its message lists the same variables.
func TestRateLimitKeyVariablesMatchCRD(t *testing.T) {
	rule := regexp.MustCompile(keyVariablesRule(t))
	goAllows := func(key string) bool {
		p := &v1alpha1.RateLimitPolicy{Spec: v1alpha1.RateLimitPolicySpec{RateLimit: &v1alpha1.RateLimit{
			Local: &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{{Rate: "1r/s", Key: key}}},
		}}}
		for _, e := range validation.RateLimitPolicy(p) {
			if e.Detail == validation.MsgKeyVariables {
				return false
			}
		}
		return true
	}
	var keys []string
	names := []string{"", "a", "_", "1", "x_y", "nosuch", "http", "http_", "arg", "arg_", "cookie", "cookie_", "args_x", "Host", "request_body"}
	for _, v := range validation.RateLimitKeyVariables {
		names = append(names, v, v+"x", v+"_", v[:len(v)-1])
	}
	for _, p := range validation.RateLimitKeyVariablePrefixes {
		names = append(names, p+"a", p+"A_1", p+"_")
	}
	for _, a := range names {
		for _, sep := range []string{"", "-", ":", "$", "é", ".", "x"} {
			for _, b := range names {
				keys = append(keys, "$"+a+sep+"$"+b, "k"+sep+"$"+a+sep, a+sep+"$"+b, "$"+a+sep+b)
			}
		}
	}
	for _, key := range keys {
		if got, want := rule.MatchString(key), goAllows(key); got != want {
			t.Errorf("key %q: the CRD's rule allows it: %v, Go: %v", key, got, want)
		}
	}
	for _, v := range validation.RateLimitKeyVariables {
		if !strings.Contains(validation.MsgKeyVariables, "$"+v+",") {
			t.Errorf("MsgKeyVariables does not list $%s", v)
		}
	}
	for _, p := range validation.RateLimitKeyVariablePrefixes {
		if !strings.Contains(validation.MsgKeyVariables, "$"+p+"<name>") {
			t.Errorf("MsgKeyVariables does not list $%s<name>", p)
		}
	}
}
