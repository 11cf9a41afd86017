package graph

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// gep2257RE is the Gateway API duration grammar (GEP-2257): one to four
// components of up to five digits with units h, m, s or ms.
var gep2257RE = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// nginxDuration converts a Gateway API duration ("1h30m", "500ms") to NGINX
// time syntax in milliseconds. "0s" means no timeout and is returned as "".
func nginxDuration(d string) (string, error) {
	if !gep2257RE.MatchString(d) {
		return "", fmt.Errorf("invalid duration %q: use GEP-2257 syntax such as 10s, 500ms or 1h30m", d)
	}
	parsed, err := time.ParseDuration(d)
	if err != nil {
		return "", fmt.Errorf("invalid duration %q: %w", d, err)
	}
	if parsed == 0 {
		return "", nil
	}
	return fmt.Sprintf("%dms", parsed.Milliseconds()), nil
}

// milliseconds reads a duration nginxDuration returned ("1500ms").
func milliseconds(d string) int64 {
	ms, _ := strconv.ParseInt(strings.TrimSuffix(d, "ms"), 10, 64)
	return ms
}
