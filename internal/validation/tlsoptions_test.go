package validation

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTLSOptions(t *testing.T) {
	ngf := map[string]string{ // NGF's https-termination example
		TLSOptionProtocols:           "TLSv1.2 TLSv1.3",
		TLSOptionCiphers:             "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:HIGH:!aNULL:!MD5",
		TLSOptionPreferServerCiphers: "on",
	}
	o, unknown, errs := ParseTLSOptions(ngf)
	if len(errs) > 0 || len(unknown) > 0 {
		t.Fatalf("NGF's example: %v %v", errs, unknown)
	}
	if !slices.Equal(o.Protocols, []string{"TLSv1.2", "TLSv1.3"}) || o.Ciphers != ngf[TLSOptionCiphers] || o.PreferServerCiphers != "on" || o.SecLevel0 {
		t.Fatalf("NGF's example read as %+v", o)
	}
	o, unknown, errs = ParseTLSOptions(map[string]string{
		TLSOptionSessionCache: "10m", TLSOptionSessionTimeout: "1d", TLSOptionECDHCurve: "P-384:X25519",
		"example.com/other": "x", "nginx.org/ssl-protocol": "TLSv1.3",
	})
	if len(errs) > 0 || o.SessionCacheBytes != 10<<20 || o.SessionTimeoutSeconds != 86400 || !slices.Equal(o.Curves, []string{"secp384r1", "X25519"}) {
		t.Fatalf("session and curves: %+v %v", o, errs)
	}
	if !slices.Equal(unknown, []string{"example.com/other", "nginx.org/ssl-protocol"}) {
		t.Fatalf("unknown keys %v", unknown)
	}
	if got := (TLSOptions{}).EffectiveProtocols(); !slices.Equal(got, []string{"TLSv1.2", "TLSv1.3"}) {
		t.Fatalf("default protocols %v", got)
	}
	if got := (TLSOptions{CurvesAuto: true}).EffectiveCurves(); !slices.Equal(got, AutoTLSGroups) {
		t.Fatalf("auto %v", got)
	}
}

func TestParseTLSOptionsRefusals(t *testing.T) {
	for _, tc := range []struct {
		options map[string]string
		want    string
	}{
		{map[string]string{TLSOptionProtocols: "SSLv3 TLSv1.2"}, "Debian builds it without SSL 2 and 3"},
		{map[string]string{TLSOptionProtocols: "TLSv1.4"}, `"TLSv1.4" is not a protocol`},
		{map[string]string{TLSOptionProtocols: " "}, "names no protocol"},
		{map[string]string{TLSOptionProtocols: "TLSv1 TLSv1.2"}, "add :@SECLEVEL=0"},
		{map[string]string{TLSOptionProtocols: "TLSv1.1 TLSv1.2", TLSOptionCiphers: "HIGH:@SECLEVEL=1"}, "add :@SECLEVEL=0"},
		{map[string]string{TLSOptionCiphers: "unknown!"}, `tls.options[nginx.org/ssl-ciphers] "unknown!": "unknown!" is not a cipher or keyword`},
		{map[string]string{TLSOptionPreferServerCiphers: "yes"}, `must be "on" or "off"`},
		{map[string]string{TLSOptionSessionCache: "shared:SSL:10m"}, `must be "off", "none" or a size`},
		{map[string]string{TLSOptionSessionCache: "16k"}, "from 32k"},
		{map[string]string{TLSOptionSessionCache: "33m"}, "to 32m"},
		{map[string]string{TLSOptionSessionTimeout: "500ms"}, "NGINX refuses ms here"},
		{map[string]string{TLSOptionSessionTimeout: "8d"}, "from 1s to 7d"},
		{map[string]string{TLSOptionSessionTimeout: "0"}, "from 1s to 7d"},
		{map[string]string{TLSOptionSessionTimeout: "10M"}, "one unit"},
		{map[string]string{TLSOptionECDHCurve: "secp384r1;"}, "is not a group"},
		{map[string]string{TLSOptionECDHCurve: "P-256:prime256v1"}, "names prime256v1 twice"},
		{map[string]string{TLSOptionECDHCurve: "auto:P-256"}, "auto stands alone"},
		{map[string]string{TLSOptionECDHCurve: "secp160r1:P-256"}, "security level 2"},
		{map[string]string{TLSOptionECDHCurve: "brainpoolP256r1"}, "no group of the list is negotiated in TLS 1.3"},
		{map[string]string{TLSOptionECDHCurve: "ffdhe2048", TLSOptionProtocols: "TLSv1.2"}, "no group of the list is negotiated in TLS 1.2"},
		{map[string]string{TLSOptionCiphers: strings.Repeat("A", 5000)}, "more than"},
	} {
		_, _, errs := ParseTLSOptions(tc.options)
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.options, errs, tc.want)
		}
	}
	for _, ok := range []map[string]string{
		{TLSOptionProtocols: "TLSv1 TLSv1.1 TLSv1.2", TLSOptionCiphers: "DEFAULT:@SECLEVEL=0"},
		{TLSOptionProtocols: "TLSv1.3", TLSOptionECDHCurve: "ffdhe2048"},
		{TLSOptionProtocols: "TLSv1.2", TLSOptionECDHCurve: "brainpoolP256r1"},
		{TLSOptionSessionCache: "off", TLSOptionSessionTimeout: "300"},
		{TLSOptionSessionCache: "none", TLSOptionSessionTimeout: "7d"},
		{TLSOptionSessionCache: "32m"},
	} {
		if _, _, errs := ParseTLSOptions(ok); len(errs) > 0 {
			t.Errorf("%v: %v", ok, errs)
		}
	}
}
