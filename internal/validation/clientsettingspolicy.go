package validation

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Patterns of ClientSettingsPolicy's values (the ByteSize and Duration types'
// CRD patterns, NGINX Gateway Fabric's).
const (
	// ByteSizePattern is a size of at most 4 digits with an optional k, m or g.
	ByteSizePattern = `^\d{1,4}(k|m|g)?$`
	// DurationPattern is a duration of at most 4 digits with an optional ms, s,
	// m or h; no suffix means seconds.
	DurationPattern = `^[0-9]{1,4}(ms|s|m|h)?$`
)

// Messages of ClientSettingsPolicy's rules, identical to the CRD's CEL messages.
const (
	MsgTargetRefKind      = "TargetRef Kind must be one of: Gateway, HTTPRoute, or GRPCRoute"
	MsgTargetRefGroup     = "TargetRef Group must be gateway.networking.k8s.io."
	MsgHeaderNeedsServer  = "header can only be specified if server is specified"
	MsgHeaderWholeSeconds = "header must be in whole seconds (s, m or h): NGINX refuses milliseconds there"
)

var (
	byteSizeRE = regexp.MustCompile(ByteSizePattern)
	durationRE = regexp.MustCompile(DurationPattern)
)

// ClientSettingsPolicy re-checks a ClientSettingsPolicy against its CRD's rules.
func ClientSettingsPolicy(p *v1alpha1.ClientSettingsPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	errs := TargetRef(spec.Child("targetRef"), p.Spec.TargetRef)
	if b := p.Spec.Body; b != nil {
		path := spec.Child("body")
		errs = append(errs, byteSize(path.Child("maxSize"), b.MaxSize)...)
		errs = append(errs, byteSize(path.Child("bufferSize"), b.BufferSize)...)
		errs = append(errs, duration(path.Child("timeout"), b.Timeout)...)
	}
	if k := p.Spec.KeepAlive; k != nil {
		path := spec.Child("keepAlive")
		if k.Requests != nil {
			errs = append(errs, intRange(path.Child("requests"), int64(*k.Requests), 0, math.MaxInt32)...)
		}
		errs = append(errs, duration(path.Child("time"), k.Time)...)
		if t := k.Timeout; t != nil {
			tp := path.Child("timeout")
			errs = append(errs, duration(tp.Child("server"), t.Server)...)
			errs = append(errs, duration(tp.Child("header"), t.Header)...)
			if t.Header != nil && strings.HasSuffix(string(*t.Header), "ms") {
				errs = append(errs, field.Invalid(tp.Child("header"), string(*t.Header), MsgHeaderWholeSeconds))
			}
			if t.Header != nil && t.Server == nil {
				errs = append(errs, field.Invalid(tp, "object", MsgHeaderNeedsServer))
			}
		}
		errs = append(errs, duration(path.Child("minTimeout"), k.MinTimeout)...)
	}
	return errs
}

// TargetRef checks the single targetRef of a policy such as
// ClientSettingsPolicy: kind Gateway, HTTPRoute or GRPCRoute, group
// gateway.networking.k8s.io, and a name of 1-253 bytes.
func TargetRef(path *field.Path, r gatewayv1.LocalPolicyTargetReference) field.ErrorList {
	errs := objectName(path.Child("name"), string(r.Name))
	if !TargetKind(r.Kind) {
		errs = append(errs, field.Invalid(path, "object", MsgTargetRefKind))
	}
	if r.Group != v1alpha1.TargetGroup {
		errs = append(errs, field.Invalid(path, "object", MsgTargetRefGroup))
	}
	return errs
}

func byteSize(path *field.Path, s *v1alpha1.ByteSize) field.ErrorList {
	if s == nil {
		return nil
	}
	return matches(path, string(*s), byteSizeRE)
}

func duration(path *field.Path, d *v1alpha1.Duration) field.ErrorList {
	if d == nil {
		return nil
	}
	return matches(path, string(*d), durationRE)
}

// ParseDuration returns the length of a Duration value such as 500ms, 30s,
// 5m, 1h or 30 (seconds).
func ParseDuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("should match '%s'", DurationPattern)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, m[1]))
	if err != nil {
		return 0, err
	}
	unit := map[string]time.Duration{"ms": time.Millisecond, "": time.Second, "s": time.Second, "m": time.Minute, "h": time.Hour}[m[1]]
	return time.Duration(n) * unit, nil
}

// ParseByteSize returns the number of bytes of a ByteSize value such as 512,
// 8k (×1024), 10m (×1024²) or 1g (×1024³).
func ParseByteSize(s string) (int64, error) {
	if !byteSizeRE.MatchString(s) {
		return 0, fmt.Errorf("should match '%s'", ByteSizePattern)
	}
	return sizeBytes(s)
}
