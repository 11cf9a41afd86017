package validation

import (
	"errors"
	"flag"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var updateCiphers = flag.Bool("update", false, "rewrite openssl_ciphers.txt from this machine's openssl")

// openssl runs the machine's openssl, which must be the data plane's
// (Debian 12's OpenSSL 3.0).
func openssl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl not found: install Debian's openssl (the data plane's OpenSSL 3.0)")
	}
	out, err := exec.Command("openssl", args...).Output()
	return string(out), err
}

// opensslSelection is what `openssl ciphers` selects of TLS 1.2 and older
// for a cipher string, by name, or an error when OpenSSL refuses it (no
// cipher match, an invalid command).
func opensslSelection(t testing.TB, s string) ([]string, error) {
	if strings.HasPrefix(s, "-") {
		s = "@STRENGTH:" + s // not an option of the command; sorts nothing
	}
	out, err := openssl(t, "ciphers", "-ciphersuites", "", s)
	if err != nil {
		return nil, err
	}
	names := strings.Split(strings.TrimSpace(out), ":")
	slices.Sort(names)
	return names, nil
}

// TestOpenSSLCipherVocabulary: openssl_ciphers.txt is what this machine's
// OpenSSL 3.0 says (`openssl ciphers`): its ciphers, and what each keyword
// selects. -update rewrites it.
func TestOpenSSLCipherVocabulary(t *testing.T) {
	version, err := openssl(t, "version")
	if err != nil || !strings.HasPrefix(version, "OpenSSL 3.0.") {
		t.Fatalf("openssl version %q (%v): the vocabulary is the data plane's OpenSSL 3.0's", version, err)
	}
	list, err := openssl(t, "ciphers", "-ciphersuites", "", "-V", "ALL:COMPLEMENTOFALL")
	if err != nil {
		t.Fatal(err)
	}
	v := &cipherVocabulary{index: map[string]int{}, keywords: map[string]cipherSet{}}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line) // 0xC0,0x2C - NAME VERSION Kx=...
		if len(f) < 4 || f[1] != "-" {
			t.Fatalf("openssl ciphers -V: %q", line)
		}
		v.index[f[2]] = len(v.ciphers)
		v.ciphers = append(v.ciphers, f[2])
	}
	var b strings.Builder
	b.WriteString("# What OpenSSL knows of cipher strings on the data plane (Debian 12), from\n")
	b.WriteString("# `openssl ciphers`: its ciphers of TLS 1.2 and older, in its order, and\n")
	b.WriteString("# the ones each documented keyword selects (hex, the first cipher in the\n")
	b.WriteString("# lowest bit). Written by `go test ./internal/validation -run\n")
	b.WriteString("# TestOpenSSLCipherVocabulary -update`; the test checks it on every run.\n")
	b.WriteString("openssl " + strings.TrimSpace(version) + "\n")
	for _, c := range v.ciphers {
		b.WriteString("cipher " + c + "\n")
	}
	for _, k := range CipherKeywords {
		names, err := opensslSelection(t, k)
		var set cipherSet
		if err == nil {
			for _, n := range names {
				i, ok := v.index[n]
				if !ok {
					t.Fatalf("keyword %s selects %s, which ALL:COMPLEMENTOFALL does not list", k, n)
				}
				set.add(i)
			}
		}
		b.WriteString("keyword " + k + " " + formatCipherSet(set, len(v.ciphers)) + "\n")
	}
	if *updateCiphers {
		if err := os.WriteFile("openssl_ciphers.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// The version line may move with Debian's security updates; what OpenSSL
	// knows may not, unnoticed.
	withoutVersion := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "openssl ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if withoutVersion(b.String()) != withoutVersion(opensslCiphersData) {
		t.Fatalf("openssl_ciphers.txt is not what this machine's %s says: rerun with -update and review the diff", strings.TrimSpace(version))
	}
	if _, err := readCipherVocabulary(b.String()); err != nil {
		t.Fatal(err)
	}
}

// TestCipherStringMatchesOpenSSL: on random cipher strings of known
// elements (names, keywords, "+" joins, operators, DEFAULT, @ commands),
// Gatewall's emulation selects exactly the ciphers OpenSSL selects, and
// refuses exactly the strings OpenSSL refuses.
func TestCipherStringMatchesOpenSSL(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	v := opensslCiphers
	atom := func() string {
		if r.Intn(3) == 0 {
			return v.ciphers[r.Intn(len(v.ciphers))]
		}
		return CipherKeywords[r.Intn(len(CipherKeywords))]
	}
	element := func() string {
		e := atom()
		for r.Intn(4) == 0 {
			e += "+" + atom()
		}
		switch r.Intn(6) {
		case 0:
			e = "!" + e
		case 1:
			e = "-" + e
		case 2:
			e = "+" + e
		}
		return e
	}
	// Where OpenSSL's merging of masks is not an intersection: the strength
	// classes and COMPLEMENTOFDEFAULT depend on their order.
	edges := []string{"COMPLEMENTOFDEFAULT+HIGH", "HIGH+COMPLEMENTOFDEFAULT", "COMPLEMENTOFDEFAULT+AES128-SHA256",
		"AES128-SHA256+COMPLEMENTOFDEFAULT", "COMPLEMENTOFDEFAULT+aRSA", "NULL-SHA+HIGH", "HIGH+NULL-SHA", "eNULL+HIGH",
		"ADH-AES128-SHA+COMPLEMENTOFDEFAULT", "TLSv1.2+AES128-SHA", "TLSv1+TLSv1.0+ECDHE-RSA-AES128-SHA", "AES128-SHA+AES256-SHA"}
	const random = 400
	refused, agreed := 0, 0
	for i := 0; i < random+len(edges); i++ {
		if i >= random {
			s := edges[i-random]
			ours, ourErr := CipherString(s)
			theirs, theirErr := opensslSelection(t, s)
			got := slices.Clone(ours.Ciphers)
			slices.Sort(got)
			if (ourErr == nil) != (theirErr == nil) || !slices.Equal(got, theirs) {
				t.Errorf("%q: Gatewall selects %v (%v), OpenSSL %v (%v)", s, got, ourErr, theirs, theirErr)
			}
			continue
		}
		var parts []string
		if r.Intn(5) == 0 {
			parts = append(parts, "DEFAULT")
		}
		for n := 1 + r.Intn(5); n > 0; n-- {
			parts = append(parts, element())
		}
		switch r.Intn(8) {
		case 0:
			parts = append(parts, "@STRENGTH")
		case 1:
			parts = append(parts, "@SECLEVEL=1")
		}
		s := strings.Join(parts, ":")
		ours, ourErr := CipherString(s)
		theirs, theirErr := opensslSelection(t, s)
		if (ourErr == nil) != (theirErr == nil) {
			t.Errorf("%q: Gatewall says %v, OpenSSL says %v", s, ourErr, theirErr)
			continue
		}
		if ourErr != nil {
			refused++
			continue
		}
		got := slices.Clone(ours.Ciphers)
		slices.Sort(got)
		if !slices.Equal(got, theirs) {
			t.Errorf("%q: Gatewall selects %v, OpenSSL %v", s, got, theirs)
			continue
		}
		agreed++
	}
	if refused < 20 || agreed < 200 {
		t.Fatalf("%d strings refused and %d selections compared: the draw misses a side", refused, agreed)
	}
	t.Logf("%d random cipher strings: %d selections equal to OpenSSL's, %d refused by both", random, agreed, refused)
}

// TestCipherStringRefusals: what OpenSSL would silently ignore is refused,
// with the element named.
func TestCipherStringRefusals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ECDHE-RSA-AES128-GCM-SHA265:!aNULL", `"ECDHE-RSA-AES128-GCM-SHA265" is not a cipher or keyword`},
		{"HIGH:!aNUL", `"aNUL" is not a cipher or keyword`},
		{"HIGH:DEFAULT", "DEFAULT is read only as the first element"},
		{"TLS_AES_128_GCM_SHA256:HIGH", "is a TLS 1.3 cipher suite"},
		{"SUITEB128", "Suite B"},
		{"HIGH::MEDIUM", "empty element"},
		{"HIGH,MEDIUM", "is not a cipher or keyword"},
		{"HIGH MEDIUM", "is not a cipher or keyword"},
		{"AES+", "empty part"},
		{"HIGH:@SECLEVEL=3", "the level may be 0 to 2"},
		{"HIGH:@FOO", "not a command"},
		{"eNULL:!eNULL", "selects no cipher"},
		{"LOW", "selects no cipher"},
		{"HIGH+MEDIUM", "selects no cipher"},
		{"", "is empty"},
	} {
		_, err := CipherString(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
	for _, ok := range []string{"ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:HIGH:!aNULL:!MD5", "HIGH:!aNULL:!MD5", "DEFAULT:@SECLEVEL=0", "kEECDH+AESGCM:!aNULL", "ALL:-RSA:+SHA1:@STRENGTH"} {
		if _, err := CipherString(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if _, err := opensslSelection(t, "HIGH:!aNUL"); err != nil {
		t.Fatalf("OpenSSL no longer ignores an unknown element silently (%v): the refusal's reason changed", err)
	}
	var exit *exec.ExitError
	if _, err := opensslSelection(t, "LOW"); !errors.As(err, &exit) {
		t.Fatalf("OpenSSL accepts LOW (%v): it selects ciphers again", err)
	}
}
