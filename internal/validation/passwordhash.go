package validation

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Password hashes of htpasswd lines. NGINX verifies a password against a
// line's hash itself for {PLAIN}, {SHA}, {SSHA} and $apr1$, and through the
// system's crypt(3) for everything else: on the data plane (Debian 12)
// that is libxcrypt 4.4, whose schemes are checked here one by one. A hash
// crypt(3) cannot use makes it answer a failure token, so the user could
// never log in; a hash NGINX's own code cannot use fails the request (500).
// Either way the line is refused, with what is wrong.
//
// NGINX verifies in the worker that serves the request, which serves
// nothing else meanwhile: a hash that takes a second to verify lets anyone
// who knows a user's name stall the Gateway's workers, every tenant's
// traffic with them. So each scheme's cost parameter is bounded, to about
// a tenth of a second of one core (the project's machine) or 16 MiB for
// the memory-hard ones: the defaults of htpasswd, openssl passwd, mkpasswd
// and Go's bcrypt are all within (docs/authentication.md lists them).
const (
	// MaxBcryptCost is the largest bcrypt cost (2^cost rounds; Go's default 10).
	MaxBcryptCost = 10
	// MaxSHACryptRounds bounds $5$ and $6$ rounds (default 5,000).
	MaxSHACryptRounds = 100000
	// MaxSHA1CryptRounds bounds $sha1$ rounds (NetBSD's sha1crypt).
	MaxSHA1CryptRounds = 64000
	// MaxSunMD5Rounds bounds $md5 rounds (Sun's MD5 crypt).
	MaxSunMD5Rounds = 10000
	// MaxBSDiCount bounds the iteration count of _ hashes (BSDi's DES).
	MaxBSDiCount = 1 << 18
	// MaxMemoryHardCost bounds N·r of yescrypt ($y$, $gy$) and N·r·p of
	// scrypt ($7$): 2^17 is 16 MiB, the defaults of mkpasswd and libxcrypt.
	MaxMemoryHardCost = 1 << 17
)

// itoa64 is crypt's alphabet of 64 characters.
const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// c64 is a run of crypt alphabet characters, for the patterns below.
const c64 = `[./0-9A-Za-z]`

var (
	apr1RE     = regexp.MustCompile(`^\$(apr1|1)\$(` + c64 + `{1,8})\$` + c64 + `{22}$`)
	shaCryptRE = regexp.MustCompile(`^\$([56])\$(?:rounds=([1-9][0-9]{0,8})\$)?(` + c64 + `{1,16})\$(` + c64 + `+)$`)
	bcryptRE   = regexp.MustCompile(`^\$2[abxy]\$([0-9]{2})\$` + c64 + `{53}$`)
	desRE      = regexp.MustCompile(`^` + c64 + `{13}$`)
	bsdiRE     = regexp.MustCompile(`^_(` + c64 + `{4})` + c64 + `{4}` + c64 + `{11}$`)
	ntRE       = regexp.MustCompile(`^\$3\$\$[0-9a-f]{32}$`)
	sha1CryptE = regexp.MustCompile(`^\$sha1\$([1-9][0-9]{0,9})\$(` + c64 + `{1,64})\$` + c64 + `{28}$`)
	sunMD5RE   = regexp.MustCompile(`^\$md5(?:,rounds=([1-9][0-9]{0,9}))?\$(` + c64 + `{1,8})\$\$` + c64 + `{22}$`)
	yescryptRE = regexp.MustCompile(`^\$(y|gy)\$j(` + c64 + `)(` + c64 + `)\$(` + c64 + `{1,64})\$` + c64 + `{43}$`)
	scryptRE   = regexp.MustCompile(`^\$7\$(` + c64 + `)(` + c64 + `{5})(` + c64 + `{5})(` + c64 + `{1,64})\$` + c64 + `{43}$`)
)

// PasswordHash checks an htpasswd line's hash and returns its scheme's
// name. The error never quotes the hash.
func PasswordHash(h string) (string, error) {
	switch {
	case strings.HasPrefix(h, "{PLAIN}"):
		if h == "{PLAIN}" {
			return "", fmt.Errorf("a {PLAIN} password must not be empty: anyone who knows the user's name would be let in")
		}
		return "{PLAIN}", nil
	case strings.HasPrefix(h, "{SHA}"):
		return "{SHA}", shaDigest(h[len("{SHA}"):], false)
	case strings.HasPrefix(h, "{SSHA}"):
		return "{SSHA}", shaDigest(h[len("{SSHA}"):], true)
	case strings.HasPrefix(h, "$apr1$"), strings.HasPrefix(h, "$1$"):
		scheme := "$1$ (MD5-crypt)"
		if strings.HasPrefix(h, "$apr1$") {
			scheme = "$apr1$ (Apache MD5)"
		}
		if !apr1RE.MatchString(h) {
			return "", fmt.Errorf("a %s hash is $, the scheme, $, a salt of 1 to 8 characters of ./0-9A-Za-z, $ and 22 such characters", scheme)
		}
		return scheme, nil
	case strings.HasPrefix(h, "$5$"), strings.HasPrefix(h, "$6$"):
		return shaCrypt(h)
	case strings.HasPrefix(h, "$2"):
		return bcrypt(h)
	case strings.HasPrefix(h, "$y$"), strings.HasPrefix(h, "$gy$"):
		return yescrypt(h)
	case strings.HasPrefix(h, "$7$"):
		return scrypt(h)
	case strings.HasPrefix(h, "$sha1$"):
		m := sha1CryptE.FindStringSubmatch(h)
		if m == nil {
			return "", fmt.Errorf("a $sha1$ hash is $sha1$, the rounds, $, a salt of 1 to 64 characters of ./0-9A-Za-z, $ and 28 such characters")
		}
		return "$sha1$ (SHA1-crypt)", bounded("$sha1$ rounds", m[1], MaxSHA1CryptRounds)
	case strings.HasPrefix(h, "$md5"):
		m := sunMD5RE.FindStringSubmatch(h)
		if m == nil {
			return "", fmt.Errorf("a $md5 hash is $md5, an optional ,rounds=N, $, a salt of 1 to 8 characters of ./0-9A-Za-z, $$ and 22 such characters")
		}
		if m[1] == "" {
			return "$md5 (Sun MD5)", nil
		}
		return "$md5 (Sun MD5)", bounded("$md5 rounds", m[1], MaxSunMD5Rounds)
	case strings.HasPrefix(h, "$3$"):
		if !ntRE.MatchString(h) {
			return "", fmt.Errorf("a $3$ (NT) hash is $3$$ and 32 lower-case hexadecimal digits")
		}
		return "$3$ (NT)", nil
	case strings.HasPrefix(h, "_"):
		m := bsdiRE.FindStringSubmatch(h)
		if m == nil {
			return "", fmt.Errorf("a _ (BSDi DES) hash is _ and 19 characters of ./0-9A-Za-z")
		}
		if n := decodeLittle64(m[1]); n > MaxBSDiCount {
			return "", fmt.Errorf("a _ (BSDi DES) hash with %d iterations: Gatewall allows at most %d (NGINX verifies in the worker serving the request, which serves nothing else meanwhile)", n, MaxBSDiCount)
		}
		return "_ (BSDi DES)", nil
	case desRE.MatchString(h):
		return "DES", nil
	}
	return "", fmt.Errorf("the password hash is in no format NGINX can verify: {PLAIN}, {SHA}, {SSHA}, $apr1$, $1$, $5$, $6$, $2a$, $2b$, $2x$, $2y$, $y$, $gy$, $7$, $sha1$, $md5, $3$, _ or DES (13 characters)")
}

// shaDigest checks a {SHA} or {SSHA} hash: standard base64 (with padding)
// of a SHA-1 digest, followed by the salt for {SSHA}.
func shaDigest(b64 string, salted bool) error {
	scheme := "{SHA}"
	if salted {
		scheme = "{SSHA}"
	}
	data, err := base64.StdEncoding.Strict().DecodeString(b64)
	switch {
	case err != nil:
		return fmt.Errorf("a %s hash is standard base64 with padding, and this is not", scheme)
	case !salted && len(data) != sha1.Size:
		return fmt.Errorf("a {SHA} hash is the base64 of a SHA-1 digest (%d bytes), not of %d bytes", sha1.Size, len(data))
	case salted && len(data) <= sha1.Size:
		return fmt.Errorf("an {SSHA} hash is the base64 of a SHA-1 digest (%d bytes) and a salt, not of %d bytes", sha1.Size, len(data))
	}
	return nil
}

func shaCrypt(h string) (string, error) {
	m := shaCryptRE.FindStringSubmatch(h)
	scheme, digest := "$5$ (SHA256-crypt)", 43
	if strings.HasPrefix(h, "$6$") {
		scheme, digest = "$6$ (SHA512-crypt)", 86
	}
	if m == nil || len(m[4]) != digest {
		return "", fmt.Errorf("a %s hash is the scheme, an optional rounds=N$, a salt of 1 to 16 characters of ./0-9A-Za-z, $ and %d such characters", scheme, digest)
	}
	if m[2] == "" {
		return scheme, nil
	}
	if n, _ := strconv.Atoi(m[2]); n < 1000 {
		// crypt(3) of libxcrypt refuses fewer rounds than 1,000 (it
		// would not write them so).
		return "", fmt.Errorf("a %s hash with %d rounds: crypt(3) takes 1,000 or more", scheme, n)
	}
	return scheme, bounded(scheme+" rounds", m[2], MaxSHACryptRounds)
}

func bcrypt(h string) (string, error) {
	m := bcryptRE.FindStringSubmatch(h)
	if m == nil {
		return "", fmt.Errorf("a bcrypt hash is $2a$, $2b$, $2x$ or $2y$, a cost of two digits, $ and 53 characters of ./0-9A-Za-z")
	}
	cost, _ := strconv.Atoi(m[1])
	switch {
	case cost < 4 || cost > 31:
		return "", fmt.Errorf("a bcrypt hash with cost %d: bcrypt's costs are 04 to 31", cost)
	case cost > MaxBcryptCost:
		return "", fmt.Errorf("a bcrypt hash with cost %d takes NGINX about %s to verify, in the worker serving the request, which serves nothing else meanwhile: Gatewall allows a cost of at most %d; hash the password again with that cost (htpasswd -B -C %d)",
			cost, approxBcrypt(cost), MaxBcryptCost, MaxBcryptCost)
	}
	return "bcrypt", nil
}

// approxBcrypt is how long a bcrypt cost takes on the project's machine
// (cost 10: about 60 ms, doubling per step), for messages.
func approxBcrypt(cost int) string {
	ms := 60 << (cost - 10)
	switch {
	case ms >= 3600*1000:
		return strconv.Itoa(ms/3600/1000) + " h"
	case ms >= 1000:
		return strconv.Itoa(ms/1000) + " s"
	}
	return strconv.Itoa(ms) + " ms"
}

// yescrypt checks a $y$ or $gy$ hash of the form libxcrypt writes: the
// default flavor (j), N and r one character each (N = 2^(index+1), r =
// index+1), the salt in yescrypt's base64.
func yescrypt(h string) (string, error) {
	m := yescryptRE.FindStringSubmatch(h)
	scheme := "$y$ (yescrypt)"
	if strings.HasPrefix(h, "$gy$") {
		scheme = "$gy$ (GOST yescrypt)"
	}
	if m == nil {
		return "", fmt.Errorf("a %s hash is the scheme, j and two characters (N and r), $, a salt of up to 64 characters of ./0-9A-Za-z, $ and 43 such characters", scheme)
	}
	logN, r := strings.IndexByte(itoa64, m[2][0])+1, strings.IndexByte(itoa64, m[3][0])+1
	// One character holds values below 47; larger ones take more.
	if logN >= 48 || r >= 48 {
		return "", fmt.Errorf("a %s hash whose N and r are not one character each, as libxcrypt writes them", scheme)
	}
	if err := yescryptSalt(m[4]); err != nil {
		return "", fmt.Errorf("a %s hash whose salt %w", scheme, err)
	}
	if logN > 17 || int64(r)<<logN > MaxMemoryHardCost {
		return "", fmt.Errorf("a %s hash with N=2^%d and r=%d needs %s of memory per verification, in the NGINX worker serving the request: Gatewall allows at most %d MiB (N·r ≤ 2^17, mkpasswd's default)",
			scheme, logN, r, memory(logN, int64(r)), MaxMemoryHardCost*128>>20)
	}
	return scheme, nil
}

// yescryptSalt checks a salt in yescrypt's base64: groups of four
// characters are three bytes, least significant first; a last group of two
// or three characters is one or two bytes whose unused high bits are zero.
func yescryptSalt(s string) error {
	switch rest := len(s) % 4; {
	case rest == 1:
		return fmt.Errorf("has %d characters, which decode to no whole number of bytes", len(s))
	case rest == 2 && strings.IndexByte(itoa64, s[len(s)-1]) >= 4,
		rest == 3 && strings.IndexByte(itoa64, s[len(s)-1]) >= 16:
		return fmt.Errorf("ends with bits that decode to no byte")
	}
	return nil
}

// scrypt checks a $7$ hash: N as one character (2^index), r and p as five
// characters each (30 bits, least significant first).
func scrypt(h string) (string, error) {
	m := scryptRE.FindStringSubmatch(h)
	if m == nil {
		return "", fmt.Errorf("a $7$ (scrypt) hash is $7$, N (one character), r and p (five each), a salt of up to 64 characters of ./0-9A-Za-z, $ and 43 such characters")
	}
	logN := strings.IndexByte(itoa64, m[1][0])
	r, p := decodeLittle64(m[2]), decodeLittle64(m[3])
	if logN < 1 || r < 1 || p < 1 {
		return "", fmt.Errorf("a $7$ (scrypt) hash with N=2^%d, r=%d and p=%d: each must be at least 1 (N at least 2)", logN, r, p)
	}
	// Bounded factor by factor first: the product must not overflow.
	if logN > 17 || r > MaxMemoryHardCost || p > MaxMemoryHardCost || r*p > MaxMemoryHardCost || (r*p)<<logN > MaxMemoryHardCost {
		return "", fmt.Errorf("a $7$ (scrypt) hash with N=2^%d, r=%d and p=%d costs more than N·r·p = 2^17 (16 MiB of memory and its time per verification, in the NGINX worker serving the request), which Gatewall allows at most",
			logN, r, p)
	}
	return "$7$ (scrypt)", nil
}

// decodeLittle64 decodes crypt alphabet characters, least significant first.
func decodeLittle64(s string) int64 {
	var n int64
	for i := len(s) - 1; i >= 0; i-- {
		n = n<<6 | int64(strings.IndexByte(itoa64, s[i]))
	}
	return n
}

// bounded checks a decimal cost parameter against its bound.
func bounded(what, digits string, limit int64) error {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > limit {
		return fmt.Errorf("a hash with %s %s: Gatewall allows at most %d (NGINX verifies in the worker serving the request, which serves nothing else meanwhile)", what, digits, limit)
	}
	return nil
}

// memory is what a yescrypt N and r need, in MiB or GiB.
func memory(logN int, r int64) string {
	mib := (r << logN) * 128 >> 20
	if mib >= 1024 {
		return strconv.FormatInt(mib>>10, 10) + " GiB"
	}
	return strconv.FormatInt(mib, 10) + " MiB"
}
