package plm

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// BundleRef is one bundle PLM reports in an APPolicy's or APLogConf's status.
type BundleRef struct {
	// Location is where PLM stored the bundle: s3://bucket/key.
	Location string
	// Sha256 is the bundle's checksum: 64 lower-case hex digits.
	Sha256 string
	// Revision identifies the PLM status that reports the bundle (its
	// status.processing.datetime); "" when unknown. An IntegrityError at a
	// location is not retried while that location stays wanted with the same
	// revision: PLM processing the object again (a new revision, even with
	// the same location and sha256) gives the location a new chance.
	Revision string
}

// Validate checks the reference the way Want does, so that callers can report
// a bad status before asking for a fetch.
func (r BundleRef) Validate() error {
	if err := ValidateSha256(r.Sha256); err != nil {
		return err
	}
	_, _, err := ParseLocation(r.Location)
	return err
}

const (
	locationScheme = "s3://"
	maxKeyLen      = 1024 // S3's limit on object keys, in bytes.
)

// ValidateSha256 accepts exactly 64 lower-case hex digits: the form PLM
// writes and the name of the cache file, so nothing is normalised.
func ValidateSha256(sha string) error {
	if len(sha) != 64 {
		return fmt.Errorf("invalid sha256 %q: want 64 lower-case hex digits, got %d characters", sha, len(sha))
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("invalid sha256 %q: want 64 lower-case hex digits, found %q at offset %d", sha, c, i)
		}
	}
	return nil
}

// ParseLocation splits s3://bucket/key. It is strict because the location is
// written by another controller and ends up in a request to storage and in a
// path-style URL: the bucket must follow S3's DNS-compatible naming rules and
// the key must be a plain relative path (no empty, "." or ".." segments, no
// control characters, no characters that would need escaping or could be read
// as URL syntax).
func ParseLocation(loc string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(loc, locationScheme)
	if !ok {
		return "", "", fmt.Errorf("invalid bundle location %q: must start with %q", loc, locationScheme)
	}
	bucket, key, ok = strings.Cut(rest, "/")
	if !ok || key == "" {
		return "", "", fmt.Errorf("invalid bundle location %q: want s3://bucket/key, the key is missing", loc)
	}
	if err := validateBucket(bucket); err != nil {
		return "", "", fmt.Errorf("invalid bundle location %q: %w", loc, err)
	}
	if err := validateKey(key); err != nil {
		return "", "", fmt.Errorf("invalid bundle location %q: %w", loc, err)
	}
	return bucket, key, nil
}

// validateBucket applies S3's rules for DNS-compatible bucket names: 3 to 63
// characters, dot-separated labels of lower-case letters, digits and hyphens
// that start and end with a letter or digit, and not an IP address.
func validateBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket %q must be 3 to 63 characters long", b)
	}
	for _, label := range strings.Split(b, ".") {
		if label == "" {
			return fmt.Errorf("bucket %q has an empty label", b)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case c == '-' && i > 0 && i < len(label)-1:
			default:
				return fmt.Errorf("bucket %q: labels may hold only lower-case letters, digits and inner hyphens", b)
			}
		}
	}
	if _, err := netip.ParseAddr(b); err == nil {
		return fmt.Errorf("bucket %q must not be an IP address", b)
	}
	return nil
}

// keyPunct are the punctuation characters allowed in keys besides '/':
// S3's "safe" characters plus a few that need no escaping in a URL path.
const keyPunct = "-_.!*'()=+,@~:"

func validateKey(k string) error {
	if len(k) > maxKeyLen {
		return fmt.Errorf("key is %d bytes long, more than S3's %d", len(k), maxKeyLen)
	}
	if !utf8.ValidString(k) {
		return fmt.Errorf("key %q is not valid UTF-8", k)
	}
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '/':
		case strings.ContainsRune(keyPunct, r):
		default:
			return fmt.Errorf("key %q contains %q; allowed are letters, digits, '/' and %q", k, r, keyPunct)
		}
	}
	for _, seg := range strings.Split(k, "/") {
		switch seg {
		case "":
			return fmt.Errorf("key %q has an empty path segment (leading, trailing or doubled '/')", k)
		case ".", "..":
			return fmt.Errorf("key %q has a %q path segment", k, seg)
		}
	}
	return nil
}
