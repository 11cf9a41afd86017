package validation

import (
	_ "embed"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// OpenSSL reads an ssl_ciphers string element by element (ssl_ciph.c):
// each element, after an optional operator (! removes ciphers for good, -
// removes them, + moves them to the end, none adds them), is a cipher name
// or a keyword (HIGH, aRSA, AESGCM, ...), or several joined by "+", which
// selects the ciphers all of them select. It ignores what it does not
// know, and NGINX's configuration fails only when no cipher is left. So a
// typo ("ECDHE-RSA-AES128-GCM-SHA265", "!aNUL") is silently dropped, and
// may leave ciphers the owner meant to remove: Gatewall refuses every
// element OpenSSL 3.0 does not know, and emulates the selection to refuse
// a string that leaves no cipher.
//
// What OpenSSL 3.0 knows on the data plane is data
// (openssl_ciphers.txt, written by TestOpenSSLCipherVocabulary from the
// machine's `openssl ciphers`, and checked against it on every run): the
// TLS 1.2 and older ciphers, and for each documented keyword the ciphers
// it selects.

//go:embed openssl_ciphers.txt
var opensslCiphersData string

// CipherKeywords are the keywords OpenSSL 3.0 documents for cipher strings
// (openssl-ciphers(1)), and TLSv1, its older spelling of TLSv1.0. Those
// it documents as removed since OpenSSL 1.1.0 (DES, kDH, aDH, ...) still
// parse and select nothing. DEFAULT (only first) and the @ commands are
// read apart.
var CipherKeywords = []string{
	"3DES", "ADH", "AECDH", "AES", "AES128", "AES256", "AESCCM", "AESCCM8", "AESGCM", "ALL",
	"ARIA", "ARIA128", "ARIA256", "CAMELLIA", "CAMELLIA128", "CAMELLIA256", "CBC", "CHACHA20",
	"COMPLEMENTOFALL", "COMPLEMENTOFDEFAULT", "DES", "DH", "DHE", "DSS", "ECDH", "ECDHE", "ECDSA",
	"EDH", "EECDH", "GOST89MAC", "GOST94", "HIGH", "IDEA", "LOW", "MD5", "MEDIUM", "NULL", "PSK",
	"RC2", "RC4", "RSA", "SEED", "SHA", "SHA1", "SHA256", "SHA384", "SSLv3", "TLSv1", "TLSv1.0",
	"TLSv1.2", "aDH", "aDSS", "aECDSA", "aGOST", "aGOST01", "aNULL", "aPSK", "aRSA", "eNULL",
	"kDH", "kDHE", "kDHEPSK", "kDHd", "kDHr", "kECDHE", "kECDHEPSK", "kEDH", "kEECDH", "kGOST",
	"kPSK", "kRSA", "kRSAPSK",
}

// strengthKeywords select by OpenSSL's strength classes (selection).
var strengthKeywords = map[string]bool{"HIGH": true, "MEDIUM": true, "LOW": true}

// defaultCipherRules is what DEFAULT stands for when it starts a cipher
// string (OpenSSL 3.0's OSSL_default_cipher_list): its "!" removes those
// ciphers for good, so the rest of the string cannot add them back.
var defaultCipherRules = []string{"ALL", "!COMPLEMENTOFDEFAULT", "!eNULL"}

// tls13Suites are OpenSSL's TLS 1.3 cipher suites, which ssl_ciphers does
// not set (NGINX 1.22 has no directive for them: TLS 1.3 uses OpenSSL's
// default suites) and OpenSSL would silently ignore there.
var tls13Suites = map[string]bool{"TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_GCM_SHA256": true, "TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_CCM_8_SHA256": true}

// MaxCipherSecLevel is the highest @SECLEVEL a cipher string may set: the
// data plane's own (Debian builds OpenSSL 3.0 at level 2). A higher level
// would also refuse certificates Gatewall accepts (level 3 wants 3,072-bit
// RSA keys), and every handshake of the listener would fail.
const MaxCipherSecLevel = 2

// CipherList is what a valid cipher string selects.
type CipherList struct {
	// Ciphers are the ciphers selected, by OpenSSL name, in OpenSSL's
	// listing order (not the string's preference order).
	Ciphers []string
	// SecLevel is the security level the string sets with @SECLEVEL, or
	// -1 when it sets none.
	SecLevel int
}

// cipherSet is a set of ciphers, by their index in the vocabulary.
type cipherSet [3]uint64

const maxCiphers = 3 * 64

func (s cipherSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s *cipherSet) add(i int)     { s[i/64] |= 1 << (i % 64) }
func (s cipherSet) and(o cipherSet) cipherSet {
	return cipherSet{s[0] & o[0], s[1] & o[1], s[2] & o[2]}
}
func (s cipherSet) or(o cipherSet) cipherSet { return cipherSet{s[0] | o[0], s[1] | o[1], s[2] | o[2]} }
func (s cipherSet) minus(o cipherSet) cipherSet {
	return cipherSet{s[0] &^ o[0], s[1] &^ o[1], s[2] &^ o[2]}
}
func (s cipherSet) count() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2])
}

// cipherVocabulary is openssl_ciphers.txt read.
type cipherVocabulary struct {
	// version is the OpenSSL the data was taken from.
	version  string
	ciphers  []string
	index    map[string]int
	keywords map[string]cipherSet
}

var opensslCiphers = mustReadCipherVocabulary(opensslCiphersData)

// mustReadCipherVocabulary reads the embedded data; a malformed file is a
// build defect, which TestOpenSSLCipherVocabulary catches.
func mustReadCipherVocabulary(data string) *cipherVocabulary {
	v, err := readCipherVocabulary(data)
	if err != nil {
		panic("openssl_ciphers.txt: " + err.Error())
	}
	return v
}

// readCipherVocabulary reads lines "openssl VERSION", "cipher NAME" (in
// OpenSSL's order) and "keyword NAME HEX" (the set, bit i for cipher i);
// '#' starts a comment.
func readCipherVocabulary(data string) (*cipherVocabulary, error) {
	v := &cipherVocabulary{index: map[string]int{}, keywords: map[string]cipherSet{}}
	for n, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "openssl" && len(f) >= 2:
			v.version = strings.Join(f[1:], " ")
		case f[0] == "cipher" && len(f) == 2:
			if _, dup := v.index[f[1]]; dup || len(v.ciphers) == maxCiphers {
				return nil, fmt.Errorf("line %d: cipher %s twice, or over %d ciphers", n+1, f[1], maxCiphers)
			}
			v.index[f[1]] = len(v.ciphers)
			v.ciphers = append(v.ciphers, f[1])
		case f[0] == "keyword" && len(f) == 3:
			set, err := parseCipherSet(f[2], len(v.ciphers))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			v.keywords[f[1]] = set
		default:
			return nil, fmt.Errorf("line %d: %q", n+1, line)
		}
	}
	for _, k := range CipherKeywords {
		if _, ok := v.keywords[k]; !ok {
			return nil, fmt.Errorf("keyword %s has no line", k)
		}
	}
	return v, nil
}

// formatCipherSet writes a set as hex, the lowest cipher in the last digit.
func formatCipherSet(s cipherSet, n int) string {
	var b strings.Builder
	for d := (n+3)/4 - 1; d >= 0; d-- {
		nibble := 0
		for i := 0; i < 4; i++ {
			if c := 4*d + i; c < n && s.has(c) {
				nibble |= 1 << i
			}
		}
		b.WriteString(strconv.FormatInt(int64(nibble), 16))
	}
	return b.String()
}

func parseCipherSet(h string, n int) (cipherSet, error) {
	var s cipherSet
	if len(h) != (n+3)/4 {
		return s, fmt.Errorf("set %q: want %d hex digits for %d ciphers", h, (n+3)/4, n)
	}
	for d := 0; d < len(h); d++ {
		nibble, err := strconv.ParseUint(h[len(h)-1-d:len(h)-d], 16, 8)
		if err != nil {
			return s, fmt.Errorf("set %q: %w", h, err)
		}
		for i := 0; i < 4; i++ {
			if nibble&(1<<i) != 0 {
				if 4*d+i >= n {
					return s, fmt.Errorf("set %q names cipher %d of %d", h, 4*d+i, n)
				}
				s.add(4*d + i)
			}
		}
	}
	return s, nil
}

// CipherString checks a cipher string as NGINX's ssl_ciphers passes it to
// OpenSSL 3.0 on the data plane, more strictly than OpenSSL: elements are
// separated by ':' only, and every element is an operator and names or
// keywords OpenSSL knows; DEFAULT only starts the string; the @ commands
// are @STRENGTH and @SECLEVEL=0 to MaxCipherSecLevel. It returns what the
// string selects, or why it is refused (it selects no cipher, and NGINX
// would refuse the configuration).
func CipherString(s string) (CipherList, error) {
	return opensslCiphers.parse(s)
}

func (v *cipherVocabulary) parse(s string) (CipherList, error) {
	out := CipherList{SecLevel: -1}
	if s == "" {
		return out, fmt.Errorf("is empty")
	}
	if len(s) > MaxTLSOptionLength {
		return out, fmt.Errorf("is %d bytes long, more than %d", len(s), MaxTLSOptionLength)
	}
	elements := strings.Split(s, ":")
	if elements[0] == "DEFAULT" {
		elements = append(append([]string(nil), defaultCipherRules...), elements[1:]...)
	}
	var active, killed cipherSet
	for _, e := range elements {
		if e == "" {
			return out, fmt.Errorf("has an empty element (separate elements with one ':')")
		}
		if cmd, ok := strings.CutPrefix(e, "@"); ok {
			level, err := cipherCommand(cmd)
			if err != nil {
				return out, err
			}
			if level >= 0 {
				out.SecLevel = level
			}
			continue
		}
		op, body := byte(0), e
		if e[0] == '!' || e[0] == '-' || e[0] == '+' {
			op, body = e[0], e[1:]
		}
		set, err := v.selection(body)
		if err != nil {
			return out, err
		}
		switch op {
		case 0:
			active = active.or(set.minus(killed))
		case '-':
			active = active.minus(set)
		case '!':
			active, killed = active.minus(set), killed.or(set)
		}
	}
	if active.count() == 0 {
		return out, fmt.Errorf("selects no cipher of TLS 1.2 or older (NGINX would refuse it: \"no cipher match\")")
	}
	for i, name := range v.ciphers {
		if active.has(i) {
			out.Ciphers = append(out.Ciphers, name)
		}
	}
	return out, nil
}

// cipherCommand reads an @ command: the security level it sets, or -1.
func cipherCommand(cmd string) (int, error) {
	if cmd == "STRENGTH" {
		return -1, nil
	}
	if n, ok := strings.CutPrefix(cmd, "SECLEVEL="); ok {
		level, err := strconv.Atoi(n)
		if err != nil || len(n) != 1 || level < 0 || level > MaxCipherSecLevel {
			return -1, fmt.Errorf("%s: the level may be 0 to %d (the data plane's OpenSSL runs at level 2; a higher level would refuse the listener's certificate or every handshake)", quoteShort("@"+cmd), MaxCipherSecLevel)
		}
		return level, nil
	}
	return -1, fmt.Errorf("%s is not a command OpenSSL 3.0 knows (@STRENGTH, @SECLEVEL=n)", quoteShort("@"+cmd))
}

// selection is the set of ciphers an element without operator selects:
// names and keywords joined by "+". OpenSSL merges their masks: a cipher
// is selected when every name and keyword selects it, except for the
// strength classes (HIGH, MEDIUM, LOW: each cipher has one, NULL ciphers
// none of them) and COMPLEMENTOFDEFAULT, which OpenSSL merges in order:
// the first class (a keyword's, or a named cipher's own) replaces a
// COMPLEMENTOFDEFAULT before it, and a second, different one selects
// nothing.
func (v *cipherVocabulary) selection(body string) (cipherSet, error) {
	parts := strings.Split(body, "+")
	for _, part := range parts {
		switch {
		case part == "":
			return cipherSet{}, fmt.Errorf("%s has an empty part", quoteShort(body))
		case part == "DEFAULT":
			return cipherSet{}, fmt.Errorf("DEFAULT is read only as the first element of a cipher string")
		case tls13Suites[part]:
			return cipherSet{}, fmt.Errorf("%s is a TLS 1.3 cipher suite: nginx.org/ssl-ciphers sets those of TLS 1.2 and older (NGINX 1.22 has no directive for TLS 1.3's; OpenSSL's default suites apply)", part)
		case strings.HasPrefix(part, "SUITEB"):
			return cipherSet{}, fmt.Errorf("%s (Suite B mode) is not accepted: it also restricts the certificate, signature algorithms and curves of the listener", part)
		}
		_, isCipher := v.index[part]
		if _, isKeyword := v.keywords[part]; !isCipher && !isKeyword {
			return cipherSet{}, fmt.Errorf("%s is not a cipher or keyword OpenSSL 3.0 knows", quoteShort(part))
		}
	}
	set := v.keywords["ALL"].or(v.keywords["COMPLEMENTOFALL"])
	class, notDefault := "", false
	merge := func(c string, nd bool) bool {
		switch {
		case class == "":
			class, notDefault = c, false
		case class != c:
			return false
		}
		notDefault = notDefault || nd
		return true
	}
	for _, part := range parts {
		if c, ok := v.index[part]; ok {
			var one cipherSet
			one.add(c)
			set = set.and(one)
			if !merge(v.strengthClass(c), v.keywords["COMPLEMENTOFDEFAULT"].has(c)) {
				return cipherSet{}, nil
			}
			continue
		}
		switch {
		case strengthKeywords[part]:
			if !merge(part, false) {
				return cipherSet{}, nil
			}
		case part == "COMPLEMENTOFDEFAULT":
			notDefault = true
		default:
			set = set.and(v.keywords[part])
		}
	}
	if class != "" {
		set = set.and(v.strengthSet(class))
	}
	if notDefault {
		set = set.and(v.keywords["COMPLEMENTOFDEFAULT"])
	}
	return set, nil
}

// strengthClass is a cipher's strength class: HIGH, MEDIUM, LOW, or ""
// NONE for none (the NULL ciphers).
func (v *cipherVocabulary) strengthClass(c int) string {
	for _, k := range []string{"HIGH", "MEDIUM", "LOW"} {
		if v.keywords[k].has(c) {
			return k
		}
	}
	return "NONE"
}

// strengthSet is the ciphers of a strength class.
func (v *cipherVocabulary) strengthSet(class string) cipherSet {
	if class != "NONE" {
		return v.keywords[class]
	}
	all := v.keywords["ALL"].or(v.keywords["COMPLEMENTOFALL"])
	return all.minus(v.keywords["HIGH"].or(v.keywords["MEDIUM"]).or(v.keywords["LOW"]))
}

// quoteShort quotes a part of a value for a message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}

// MaxTLSOptionLength is the longest value of a listener's tls.options the
// Gateway API allows (its AnnotationValue).
const MaxTLSOptionLength = 4096
