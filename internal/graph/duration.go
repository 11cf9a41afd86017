package graph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/validation"
)

// nginxDuration converts a Gateway API duration ("1h30m", "500ms") to NGINX
// time syntax in milliseconds. "0s" means no timeout and is returned as "".
func nginxDuration(d string) (string, error) {
	parsed, err := validation.GatewayDuration(d)
	if err != nil {
		return "", err
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
