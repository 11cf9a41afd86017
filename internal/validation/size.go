package validation

import (
	"fmt"
	"regexp"
	"strconv"
)

// SizePattern is the pattern of a size value (the Size type's CRD pattern).
const SizePattern = `^\d+[kKmM]?$`

// MaxSizeLength is the CRD's maxLength of a size value: 11 digits and a suffix
// keep every size times its unit inside int64 (at most about 2^57 bytes). A
// product of sizes could still overflow; the rules that multiply bound their
// operands first (see MaxBuffersSize).
const MaxSizeLength = 12

// MaxBuffersSize is the largest buffers.size, 1024m: NGINX refuses a proxy
// buffer larger than proxy_max_temp_file_size, whose default (1024m) Gatewall
// does not change. It also keeps (buffers.number-1) × buffers.size far inside
// int64, in CEL as in Go.
const MaxBuffersSize = 1024 * 1024 * 1024

var sizeRE = regexp.MustCompile(SizePattern)

// ParseSize returns the number of bytes of a size value such as 4096, 8k or 1m
// (NGINX's own size syntax, without its g suffix).
func ParseSize(s string) (int64, error) {
	switch {
	case len(s) > MaxSizeLength:
		return 0, fmt.Errorf("may not be more than %d bytes", MaxSizeLength)
	case s == "":
		return 0, fmt.Errorf("should be at least 1 chars long")
	}
	if !sizeRE.MatchString(s) {
		return 0, fmt.Errorf("should match '%s'", SizePattern)
	}
	return sizeBytes(s)
}

// sizeBytes reads a size its caller matched against its pattern: digits
// with an optional k, m or g (either case) for 1024, 1024² or 1024³.
func sizeBytes(s string) (int64, error) {
	unit := int64(1)
	digits := s
	switch s[len(s)-1] {
	case 'k', 'K':
		unit, digits = 1<<10, s[:len(s)-1]
	case 'm', 'M':
		unit, digits = 1<<20, s[:len(s)-1]
	case 'g', 'G':
		unit, digits = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	return n * unit, nil
}
