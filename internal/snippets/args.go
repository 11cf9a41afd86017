package snippets

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// Bounds of the values snippets may set.
const (
	// MinZoneSize is the smallest zone NGINX takes: 8 memory pages.
	MinZoneSize = 32 << 10
	// MaxZoneSize is the largest zone one declaration may ask for; a
	// Gateway's snippets share a budget of them (graph.SnippetsZoneBudget).
	MaxZoneSize = 64 << 20
	// MaxZones is the most zones one object may declare.
	MaxZones = 8
	// maxRate bounds the sizes of rates and lengths: 1g, far above any
	// use, so that no value is near NGINX's size_t limits.
	maxRate = 1 << 30
	// maxMIMETypes is the most types gzip_types may list.
	maxMIMETypes = 32
)

// zoneKeys are the keys a zone may count by: the client's address, or
// the server's name. A key the client writes freely (a header, $host)
// would let one client fill the zone with keys of its own, after which
// NGINX refuses every request that needs a new key.
var zoneKeys = []string{"$binary_remote_addr", "$remote_addr", "$server_name"}

// zoneNameRE is a zone's name as a snippet writes it.
var zoneNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// limitExceptMethods are the methods NGINX 1.22's limit_except knows.
var limitExceptMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "MKCOL", "COPY", "MOVE", "OPTIONS", "PROPFIND",
	"PROPPATCH", "LOCK", "UNLOCK", "PATCH"}

// gzipProxiedWords are gzip_proxied's parameters.
var gzipProxiedWords = []string{"off", "expired", "no-cache", "no-store", "private", "no_last_modified", "no_etag", "auth", "any"}

// mimeTypeRE is a MIME type as gzip_types takes it (lower case: NGINX
// compares them as written).
var mimeTypeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$`)

func count(args []string, lo, hi int) error {
	switch {
	case len(args) < lo && lo == hi:
		return fmt.Errorf("takes %s, not %d", plural(lo, "argument"), len(args))
	case len(args) < lo:
		return fmt.Errorf("takes at least %s", plural(lo, "argument"))
	case len(args) > hi && lo == hi:
		return fmt.Errorf("takes %s, not %d", plural(lo, "argument"), len(args))
	case len(args) > hi:
		return fmt.Errorf("takes at most %s, not %d", plural(hi, "argument"), len(args))
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// oneOf takes one argument among words.
func oneOf(words ...string) func([]string) error {
	return func(args []string) error {
		if err := count(args, 1, 1); err != nil {
			return err
		}
		if !slices.Contains(words, args[0]) {
			return fmt.Errorf("takes %s, not %s", strings.Join(words, " or "), conditions.Quote(args[0]))
		}
		return nil
	}
}

// digits reads a decimal number of at most 9 digits.
func digits(s string) (int64, bool) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// number takes one number from lo to hi.
func number(lo, hi int64) func([]string) error {
	return func(args []string) error {
		if err := count(args, 1, 1); err != nil {
			return err
		}
		return inRange(args[0], lo, hi)
	}
}

func inRange(s string, lo, hi int64) error {
	n, ok := digits(s)
	if !ok || n < lo || n > hi {
		return fmt.Errorf("takes a number from %d to %d, not %s", lo, hi, conditions.Quote(s))
	}
	return nil
}

func statusCode(args []string) error { return number(400, 599)(args) }

// size takes one size in NGINX's syntax (digits, k or m) from lo to hi bytes.
func size(lo, hi int64) func([]string) error {
	return func(args []string) error {
		if err := count(args, 1, 1); err != nil {
			return err
		}
		_, err := sizeIn(args[0], lo, hi)
		return err
	}
}

func sizeIn(s string, lo, hi int64) (int64, error) {
	n, err := validation.ParseSize(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("takes a size (digits, then k or m) from %s to %s, not %s", human(lo), human(hi), conditions.Quote(s))
	}
	return n, nil
}

// human writes a size as NGINX reads it.
func human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// zoneDeclaration reads limit_conn_zone's zone=name:size.
func zoneDeclaration(arg string) (name string, bytes int64, err error) {
	rest, ok := strings.CutPrefix(arg, "zone=")
	name, sz, hasSize := strings.Cut(rest, ":")
	if !ok || !hasSize {
		return "", 0, fmt.Errorf("takes zone=name:size, not %s", conditions.Quote(arg))
	}
	if name == "" {
		return "", 0, fmt.Errorf("takes zone=name:size, not %s", conditions.Quote(arg))
	}
	bytes, err = sizeIn(sz, MinZoneSize, MaxZoneSize)
	if err != nil {
		return "", 0, fmt.Errorf("zone %s: %w", name, err)
	}
	return name, bytes, nil
}

func limitConnZone(args []string) error {
	if err := count(args, 2, 2); err != nil {
		return err
	}
	if !slices.Contains(zoneKeys, args[0]) {
		return fmt.Errorf("counts by %s only, not %s: a key the client writes would let one client fill the zone", strings.Join(zoneKeys, ", "),
			conditions.Quote(args[0]))
	}
	_, _, err := zoneDeclaration(args[1])
	return err
}

func limitConn(args []string) error {
	if err := count(args, 2, 2); err != nil {
		return err
	}
	return inRange(args[1], 1, 65535)
}

// userZoneName checks a zone's name as a snippet writes it.
func userZoneName(name string) error {
	if !zoneNameRE.MatchString(name) {
		return fmt.Errorf("a zone's name is 1 to 64 letters, digits, '_' and '-', not %s", conditions.Quote(name))
	}
	return nil
}

// accessAddress takes all, an IPv4 or IPv6 address, or a network whose
// address has no bits past its prefix (NGINX warns on every reload of one
// that has: "low address bits are meaningless").
func accessAddress(args []string) error {
	if err := count(args, 1, 1); err != nil {
		return err
	}
	a := args[0]
	if a == "all" {
		return nil
	}
	if p, err := netip.ParsePrefix(a); err == nil {
		if p.Masked() != p {
			return fmt.Errorf("network %s has bits past its prefix length: write %s", conditions.Quote(a), p.Masked())
		}
		return nil
	}
	if ip, err := netip.ParseAddr(a); err == nil && ip.Zone() == "" {
		return nil
	}
	return fmt.Errorf("takes all, an IP address or a network (10.0.0.0/8), not %s", conditions.Quote(a))
}

// methods takes limit_except's methods, in capitals, each once.
func methods(args []string) error {
	if err := count(args, 1, len(limitExceptMethods)); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, m := range args {
		if !slices.Contains(limitExceptMethods, m) {
			return fmt.Errorf("takes the methods %s, not %s", strings.Join(limitExceptMethods, ", "), conditions.Quote(m))
		}
		if seen[m] {
			return fmt.Errorf("names %s twice", m)
		}
		seen[m] = true
	}
	return nil
}

// mimeTypes takes gzip_types' types, or "*". text/html is always
// compressed: NGINX warns on every reload of a list that names it.
func mimeTypes(args []string) error {
	if err := count(args, 1, maxMIMETypes); err != nil {
		return err
	}
	if len(args) == 1 && args[0] == "*" {
		return nil
	}
	seen := map[string]bool{}
	for _, t := range args {
		switch {
		case t == "text/html":
			return fmt.Errorf("need not name text/html, which NGINX always compresses (it warns on every reload of a list that names it)")
		case !mimeTypeRE.MatchString(t):
			return fmt.Errorf("takes MIME types in lower case (text/css) or *, not %s", conditions.Quote(t))
		case seen[t]:
			return fmt.Errorf("names %s twice", t)
		}
		seen[t] = true
	}
	return nil
}

func gzipProxied(args []string) error {
	if err := count(args, 1, len(gzipProxiedWords)); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, w := range args {
		if !slices.Contains(gzipProxiedWords, w) {
			return fmt.Errorf("takes %s, not %s", strings.Join(gzipProxiedWords, ", "), conditions.Quote(w))
		}
		if seen[w] {
			return fmt.Errorf("names %s twice", w)
		}
		seen[w] = true
	}
	return nil
}
