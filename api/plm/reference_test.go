package plm

import (
	"strings"
	"testing"
)

func TestParseLocation(t *testing.T) {
	valid := []struct{ loc, bucket, key string }{
		{"s3://bundles/policy.tgz", "bundles", "policy.tgz"},
		{"s3://plm-bundles/ns/app-policy/3f2a.tgz", "plm-bundles", "ns/app-policy/3f2a.tgz"},
		{"s3://my.bucket.v2/a/b/c", "my.bucket.v2", "a/b/c"},
		{"s3://abc/k_e-y.with=punct+(1),@~:!*'", "abc", "k_e-y.with=punct+(1),@~:!*'"},
		{"s3://b01/..hidden/x..y", "b01", "..hidden/x..y"},
		{"s3://" + strings.Repeat("a", 63) + "/" + strings.Repeat("k", 1024), strings.Repeat("a", 63), strings.Repeat("k", 1024)},
	}
	for _, tc := range valid {
		b, k, err := ParseLocation(tc.loc)
		if err != nil || b != tc.bucket || k != tc.key {
			t.Errorf("ParseLocation(%q) = %q, %q, %v; want %q, %q, nil", tc.loc, b, k, err, tc.bucket, tc.key)
		}
	}

	rejected := []struct{ loc, why string }{
		{"", "must start with"},
		{"bundles/policy.tgz", "must start with"},
		{"S3://bundles/policy.tgz", "must start with"},
		{"http://bundles/policy.tgz", "must start with"},
		{" s3://bundles/policy.tgz", "must start with"},
		{"s3://bundles", "key is missing"},
		{"s3://bundles/", "key is missing"},
		{"s3:///policy.tgz", "must be 3 to 63"},
		{"s3://ab/policy.tgz", "must be 3 to 63"},
		{"s3://" + strings.Repeat("a", 64) + "/k", "must be 3 to 63"},
		{"s3://Bundles/policy.tgz", "lower-case"},
		{"s3://bund_les/policy.tgz", "lower-case"},
		{"s3://-bundles/policy.tgz", "inner hyphens"},
		{"s3://bundles-/policy.tgz", "inner hyphens"},
		{"s3://bun..dles/policy.tgz", "empty label"},
		{"s3://.bundles/policy.tgz", "empty label"},
		{"s3://192.168.1.10/policy.tgz", "IP address"},
		{"s3://user@bundles/policy.tgz", "lower-case"},
		{"s3://bundles:9000/policy.tgz", "lower-case"},
		{"s3://bundles//policy.tgz", "empty path segment"},
		{"s3://bundles/a//b", "empty path segment"},
		{"s3://bundles/a/", "empty path segment"},
		{"s3://bundles/../etc/passwd", `".." path segment`},
		{"s3://bundles/a/../b", `".." path segment`},
		{"s3://bundles/a/./b", `"." path segment`},
		{"s3://bundles/a b", "contains ' '"},
		{"s3://bundles/a?x=1", "contains '?'"},
		{"s3://bundles/a#frag", "contains '#'"},
		{"s3://bundles/a%2F..", "contains '%'"},
		{"s3://bundles/a\\b", `contains '\\'`},
		{"s3://bundles/a\nb", `contains '\n'`},
		{"s3://bundles/a\x00b", `contains '\x00'`},
		{"s3://bundles/poli\u00e7y", "contains 'ç'"},
		{"s3://bundles/a\xffb", "not valid UTF-8"},
		{"s3://bundles/" + strings.Repeat("k", 1025), "more than S3's 1024"},
	}
	for _, tc := range rejected {
		_, _, err := ParseLocation(tc.loc)
		if err == nil {
			t.Errorf("ParseLocation(%q) succeeded; want an error about %s", tc.loc, tc.why)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "invalid bundle location") {
			t.Errorf("ParseLocation(%q) = %v; want it to mention %q", tc.loc, err, tc.why)
		}
	}
}

func TestValidateSha256(t *testing.T) {
	good := strings.Repeat("0123456789abcdef", 4)
	if err := ValidateSha256(good); err != nil {
		t.Errorf("ValidateSha256(%q) = %v", good, err)
	}
	for _, bad := range []string{"", good[:63], good + "0", strings.ToUpper(good), good[:63] + "g", " " + good[1:]} {
		if err := ValidateSha256(bad); err == nil {
			t.Errorf("ValidateSha256(%q) succeeded", bad)
		}
	}
}

// TestErrorsDoNotRepeatValues: the values come from another controller's
// status; callers decide how much of them a message shows.
func TestErrorsDoNotRepeatValues(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, loc := range []string{long, "s3://" + long + "/k", "s3://bundles/" + long + "\n"} {
		if _, _, err := ParseLocation(loc); err == nil || strings.Contains(err.Error(), long[:100]) {
			t.Errorf("ParseLocation(%.20q...) = %.200v", loc, err)
		}
	}
	for _, sha := range []string{long, strings.Repeat("g", 64)} {
		if err := ValidateSha256(sha); err == nil || strings.Contains(err.Error(), sha[:20]) {
			t.Errorf("ValidateSha256(%.20q...) = %.200v", sha, err)
		}
	}
}

func TestScope(t *testing.T) {
	cases := []struct {
		scope Scope
		loc   string
		ok    bool
	}{
		{Scope{}, "s3://anything/at/all.tgz", true},
		{Scope{}, "http://not-a-location", false},
		{Scope{Bucket: "plm"}, "s3://plm/policies/a.tgz", true},
		{Scope{Bucket: "plm"}, "s3://plm-other/policies/a.tgz", false},
		{Scope{Bucket: "plm"}, "s3://secrets/db-backup.tgz", false},
		{Scope{Bucket: "plm", Prefix: "policies"}, "s3://plm/policies/a.tgz", true},
		{Scope{Bucket: "plm", Prefix: "policies/"}, "s3://plm/policies/ns/a.tgz", true},
		{Scope{Bucket: "plm", Prefix: "policies"}, "s3://plm/policies-old/a.tgz", false},
		{Scope{Bucket: "plm", Prefix: "policies"}, "s3://plm/policies", false},
		{Scope{Bucket: "plm", Prefix: "policies"}, "s3://plm/logs/a.tgz", false},
		{Scope{Bucket: "plm", Prefix: "policies"}, "not a location", false},
	}
	for _, c := range cases {
		err := c.scope.Admits(c.loc)
		if (err == nil) != c.ok {
			t.Errorf("%+v admits %q: %v; want ok=%v", c.scope, c.loc, err, c.ok)
		}
		if err != nil && c.scope.Bucket != "" && strings.Contains(err.Error(), "secrets") {
			t.Errorf("the error repeats the location: %v", err)
		}
	}
	for _, bad := range []Scope{{Prefix: "p"}, {Bucket: "Bad_Bucket"}, {Bucket: "plm", Prefix: "../x"}, {Bucket: "plm", Prefix: "a//b"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validates", bad)
		}
	}
	for _, good := range []Scope{{}, {Bucket: "plm"}, {Bucket: "plm", Prefix: "policies/"}, {Bucket: "plm.bundles", Prefix: "a/b"}} {
		if err := good.Validate(); err != nil {
			t.Errorf("%+v: %v", good, err)
		}
	}
}
