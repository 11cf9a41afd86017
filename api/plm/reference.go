package plm

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// PLM's status is written by another controller (or by anyone allowed to
// write it), and its sha256 and location end up in cache file names, NGINX
// configuration and requests to storage. The checks below say whether a
// reported bundle can be used at all; their errors describe the problem
// without repeating the value, which callers quote as they see fit.

const (
	locationScheme = "s3://"
	maxKeyLen      = 1024 // S3's limit on object keys, in bytes.
)

// ValidateSha256 accepts exactly 64 lower-case hex digits: the form PLM
// writes and the name of a cached bundle, so nothing is normalised.
func ValidateSha256(sha string) error {
	if len(sha) != 64 {
		return fmt.Errorf("invalid sha256: want 64 lower-case hex digits, got %d characters", len(sha))
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("invalid sha256: want 64 lower-case hex digits, found %q at offset %d", c, i)
		}
	}
	return nil
}

// ParseLocation splits s3://bucket/key. It is strict because the location
// ends up in a request to storage and in a path-style URL: the bucket must
// follow S3's DNS-compatible naming rules and the key must be a plain
// relative path (no empty, "." or ".." segments, no control characters, no
// characters that would need escaping or could be read as URL syntax).
func ParseLocation(loc string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(loc, locationScheme)
	if !ok {
		return "", "", fmt.Errorf("invalid bundle location: must start with %q", locationScheme)
	}
	bucket, key, ok = strings.Cut(rest, "/")
	if !ok || key == "" {
		return "", "", errors.New("invalid bundle location: want s3://bucket/key, the key is missing")
	}
	if err := validateBucket(bucket); err != nil {
		return "", "", fmt.Errorf("invalid bundle location: %w", err)
	}
	if err := validateKey(key); err != nil {
		return "", "", fmt.Errorf("invalid bundle location: %w", err)
	}
	return bucket, key, nil
}

// validateBucket applies S3's rules for DNS-compatible bucket names: 3 to 63
// characters, dot-separated labels of lower-case letters, digits and hyphens
// that start and end with a letter or digit, and not an IP address.
func validateBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("the bucket name must be 3 to 63 characters long, not %d", len(b))
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
		return fmt.Errorf("the key is %d bytes long, more than S3's %d", len(k), maxKeyLen)
	}
	if !utf8.ValidString(k) {
		return errors.New("the key is not valid UTF-8")
	}
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '/':
		case strings.ContainsRune(keyPunct, r):
		default:
			return fmt.Errorf("the key contains %q; allowed are letters, digits, '/' and %q", r, keyPunct)
		}
	}
	for _, seg := range strings.Split(k, "/") {
		switch seg {
		case "":
			return errors.New("the key has an empty path segment (leading, trailing or doubled '/')")
		case ".", "..":
			return fmt.Errorf("the key has a %q path segment", seg)
		}
	}
	return nil
}

// Scope is where bundles may be fetched from: one bucket, and, when Prefix
// is set, only the keys under it, taken as a folder ("policies" admits
// policies/a.tgz, not policies-old/a.tgz). A location comes from a PLM
// object's status, which anyone allowed to write it can set: without a
// scope, the manager would fetch any object its storage credentials reach.
// The zero Scope admits every location.
type Scope struct {
	Bucket string
	Prefix string
}

// Validate checks the scope itself: a bucket name S3 accepts, and a prefix
// that is a plain key path (a trailing '/' is allowed).
func (s Scope) Validate() error {
	if s.Bucket == "" {
		if s.Prefix != "" {
			return errors.New("a prefix needs a bucket")
		}
		return nil
	}
	if err := validateBucket(s.Bucket); err != nil {
		return err
	}
	if p := strings.TrimSuffix(s.Prefix, "/"); p != "" {
		if err := validateKey(p); err != nil {
			return fmt.Errorf("prefix: %w", err)
		}
	}
	return nil
}

// Admits says whether a location is valid (ParseLocation) and lies within
// the scope; its error names the scope, not the location.
func (s Scope) Admits(loc string) error {
	bucket, key, err := ParseLocation(loc)
	if err != nil || s.Bucket == "" {
		return err
	}
	folder := strings.TrimSuffix(s.Prefix, "/")
	if bucket != s.Bucket || folder != "" && !strings.HasPrefix(key, folder+"/") {
		return fmt.Errorf("the location is outside the PLM storage Gatewall may fetch from (%s)", s)
	}
	return nil
}

// String names the scope as the flags that set it.
func (s Scope) String() string {
	if s.Prefix == "" {
		return fmt.Sprintf("bucket %q", s.Bucket)
	}
	return fmt.Sprintf("bucket %q, keys under %q", s.Bucket, strings.TrimSuffix(s.Prefix, "/")+"/")
}
