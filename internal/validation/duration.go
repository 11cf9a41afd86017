package validation

import (
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayDurationPattern is the Gateway API duration grammar (GEP-2257),
// also the pattern of Gatewall's fields of that type: one to four
// components of up to five digits with units h, m, s or ms.
const GatewayDurationPattern = `^([0-9]{1,5}(h|m|s|ms)){1,4}$`

var gep2257RE = regexp.MustCompile(GatewayDurationPattern)

// GatewayDuration parses a Gateway API duration ("1h30m", "500ms").
func GatewayDuration(d string) (time.Duration, error) {
	if !gep2257RE.MatchString(d) {
		return 0, fmt.Errorf("invalid duration %q: use GEP-2257 syntax such as 10s, 500ms or 1h30m", d)
	}
	parsed, err := time.ParseDuration(d)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", d, err)
	}
	return parsed, nil
}

// durationRange checks a Gateway API duration field against its CRD's
// pattern and its CEL bounds (msg is the rule's message).
func durationRange(path *field.Path, d *gatewayv1.Duration, minimum, maximum time.Duration, msg string) field.ErrorList {
	if d == nil {
		return nil
	}
	parsed, err := GatewayDuration(string(*d))
	if err != nil {
		return field.ErrorList{field.Invalid(path, string(*d), err.Error())}
	}
	if parsed < minimum || parsed > maximum {
		return field.ErrorList{field.Invalid(path, string(*d), msg)}
	}
	return nil
}
