package plm

import (
	"strings"
	"testing"
)

func TestBundleRefValidate(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	if err := (BundleRef{Location: "s3://bundles/p.tgz", Sha256: sha}).Validate(); err != nil {
		t.Errorf("valid ref: %v", err)
	}
	if err := (BundleRef{Location: "s3://bundles/p.tgz", Sha256: "xyz"}).Validate(); err == nil {
		t.Error("bad sha256 accepted")
	}
	if err := (BundleRef{Location: "s3://bundles/../p", Sha256: sha}).Validate(); err == nil {
		t.Error("bad location accepted")
	}
}
