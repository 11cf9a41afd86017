package certgen_test

import (
	"crypto/x509"
	"reflect"
	"testing"

	"github.com/gatewall/gatewall/test/certgen"
	"github.com/gatewall/gatewall/test/snapgen"
)

// TestIssueSignsWithTheDigest: a certificate is signed with the digest
// asked for, MD5 and SHA-224 included (which Go does not sign with), and
// its signature verifies against the issuer's key.
func TestIssueSignsWithTheDigest(t *testing.T) {
	rsaCA, err := certgen.Issue(certgen.Spec{Name: "rsa ca", Key: certgen.Key(certgen.RSA2048, 0), Digest: certgen.SHA256, CA: true})
	if err != nil {
		t.Fatal(err)
	}
	ecCA, err := certgen.Issue(certgen.Spec{Name: "ec ca", Key: certgen.Key(certgen.P256, 0), Digest: certgen.SHA256, CA: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		issuer *certgen.Cert
		digest certgen.Digest
		want   x509.SignatureAlgorithm // 0: one Go does not know
	}{
		{rsaCA, certgen.SHA256, x509.SHA256WithRSA},
		{rsaCA, certgen.SHA384, x509.SHA384WithRSA},
		{rsaCA, certgen.SHA1, x509.SHA1WithRSA},
		{rsaCA, certgen.MD5, x509.MD5WithRSA},
		{rsaCA, certgen.SHA224, x509.UnknownSignatureAlgorithm},
		{rsaCA, certgen.PSS, x509.SHA256WithRSAPSS},
		{ecCA, certgen.SHA1, x509.ECDSAWithSHA1},
		{ecCA, certgen.MD5, x509.ECDSAWithSHA256},
	}
	for _, tc := range cases {
		t.Run(tc.issuer.X509.Subject.CommonName+" "+string(tc.digest), func(t *testing.T) {
			c, err := certgen.Issue(certgen.Spec{Name: "leaf", Key: certgen.Key(certgen.P256, 1), Issuer: tc.issuer, Digest: tc.digest})
			if err != nil {
				t.Fatal(err)
			}
			if c.X509.SignatureAlgorithm != tc.want {
				t.Errorf("signed with %v, want %v", c.X509.SignatureAlgorithm, tc.want)
			}
			// Go verifies neither MD5 nor SHA-1 nor SHA-224 certificate
			// signatures: those are checked by nginx -t in the property test.
			if tc.want == x509.SHA256WithRSA || tc.want == x509.SHA256WithRSAPSS || tc.want == x509.SHA384WithRSA || tc.want == x509.ECDSAWithSHA256 {
				if err := c.X509.CheckSignatureFrom(tc.issuer.X509); err != nil {
					t.Errorf("the signature does not verify: %v", err)
				}
			}
		})
	}
}

// TestDrawIsReproducible: a seed gives the same shapes of material, so a
// failure found by a seed can be drawn again.
func TestDrawIsReproducible(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, err := certgen.Draw(snapgen.FromSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		b, err := certgen.Draw(snapgen.FromSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Shapes, b.Shapes) || len(a.Shapes) == 0 {
			t.Errorf("seed %d: shapes %q then %q", seed, a.Shapes, b.Shapes)
		}
	}
}
