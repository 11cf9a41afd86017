package validation

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Patterns of RateLimitPolicy's values (NGINX Gateway Fabric's).
const (
	// RatePattern is a number of requests per second (r/s) or minute (r/m);
	// the rate rule adds that the number is 1-999999999 (MsgRateRange).
	RatePattern = `^\d+r/[sm]$`
	// RateLimitKeyPattern is a rate limit key: text without whitespace, ;,
	// {, }, # or $, and $variables. The key rules add that it holds no quote
	// or backslash (MsgKeyQuotes) and that its variables are allowed ones
	// (MsgKeyVariables).
	RateLimitKeyPattern = `^(?:[^ \t\r\n;{}#$]+|\$\w+)+$`
)

// Messages of RateLimitPolicy's rules, identical to the CRD's CEL messages.
// The targetRefs messages are NGINX Gateway Fabric's for this kind; its kind
// message is ClientSettingsPolicy's MsgTargetRefKind.
const (
	MsgRateLimitTargetGroup  = "TargetRef Group must be gateway.networking.k8s.io"
	MsgRateLimitTargetUnique = "TargetRef Kind and Name combination must be unique"
	MsgRateLimitTargetMixed  = "Cannot mix Gateway kind with HTTPRoute or GRPCRoute kinds in targetRefs"
	MsgNoDelayWithDelay      = "NoDelay cannot be true when Delay is also set"
	MsgRateRange             = "rate must be a number of requests from 1 to 999999999, without leading zeros, per second (r/s) or per minute (r/m)"
	MsgZoneSizeTooSmall      = "zoneSize must be at least 32k: NGINX refuses a limit_req zone smaller than 8 memory pages"
	MsgZoneSizeTooLarge      = "zoneSize must be at most 1g: NGINX maps the zone in shared memory when it reads its configuration"
	MsgKeyQuotes             = `key must not contain ", ' or \: they change how NGINX reads the key`
	MsgKeyVariables          = "key may only use the variables $binary_remote_addr, $remote_addr, $remote_user, $server_name, $host, $scheme, $request_method, $uri, $request_uri, $args, $server_port, $http_<name>, $arg_<name> and $cookie_<name>"
)

// Limits of RateLimitPolicy's values.
const (
	// MaxRateLimitRules is the CRD's maxItems of rateLimit.local.rules; it
	// bounds the cost of the CEL rules run on every rule.
	MaxRateLimitRules = 16
	// MaxRateLimitKeyLength is the CRD's maxLength of a rule's key.
	MaxRateLimitKeyLength = 256
	// MaxRateLength and MaxZoneSizeLength are the CRD's maxLength of a rate
	// and of a zoneSize: far more than a valid value needs (12 and 5
	// characters), so that a number a bit too long gets the rule's message;
	// they bound the cost of the CEL rules on these strings.
	MaxRateLength     = 16
	MaxZoneSizeLength = 16
	// MinRateLimitZoneSize is the smallest zoneSize, 32k: NGINX refuses a
	// shared memory zone smaller than 8 pages (of 4k on x86-64 and arm64).
	MinRateLimitZoneSize = 32 << 10
	// MaxRate is the largest number of requests of a rate.
	MaxRate = 999999999
)

// RateLimitKeyVariables are the NGINX variables, without their $, that a rate
// limit key may use, besides those of RateLimitKeyVariablePrefixes.
//
// The CRD's key rule lists the same names in one regular expression (a
// findAll over the variables, then a check of each, costs more than the API
// server's budget allows on 16 rules): the key is a sequence of characters
// other than $ and of runs of allowed variables, each run followed by the
// end or by a character that cannot continue a name. A test checks that
// the rule and RateLimitKeyVariable agree.
var RateLimitKeyVariables = []string{
	"binary_remote_addr", "remote_addr", "remote_user", "server_name", "host", "scheme",
	"request_method", "uri", "request_uri", "args", "server_port",
}

// RateLimitKeyVariablePrefixes are the prefixes of the NGINX variables a rate
// limit key may use with any name after them: a request header, a query
// parameter, a cookie.
var RateLimitKeyVariablePrefixes = []string{"http_", "arg_", "cookie_"}

var (
	rateRE             = regexp.MustCompile(RatePattern)
	rateRangeRE        = regexp.MustCompile(`^[1-9][0-9]{0,8}r/`)
	rateLimitKeyRE     = regexp.MustCompile(RateLimitKeyPattern)
	keyVariableRE      = regexp.MustCompile(`\$[A-Za-z0-9_]*`)
	keyVariableNameRE  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	rateLimitLogLevels = []string{
		string(v1alpha1.RateLimitLogLevelInfo), string(v1alpha1.RateLimitLogLevelNotice),
		string(v1alpha1.RateLimitLogLevelWarn), string(v1alpha1.RateLimitLogLevelError),
	}
)

// RateLimitKeyVariable says whether a rate limit key may use the NGINX
// variable of this name (without its $): one of RateLimitKeyVariables, or
// one of RateLimitKeyVariablePrefixes followed by at least one letter, digit
// or underscore.
func RateLimitKeyVariable(name string) bool {
	for _, v := range RateLimitKeyVariables {
		if name == v {
			return true
		}
	}
	for _, p := range RateLimitKeyVariablePrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && keyVariableNameRE.MatchString(rest) {
			return true
		}
	}
	return false
}

// RateLimitPolicy re-checks a RateLimitPolicy against its CRD's rules.
func RateLimitPolicy(p *v1alpha1.RateLimitPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	errs := rateLimitTargetRefs(spec.Child("targetRefs"), p.Spec.TargetRefs)
	rl := p.Spec.RateLimit
	if rl == nil {
		return errs
	}
	path := spec.Child("rateLimit")
	if rl.LogLevel != nil {
		errs = append(errs, enum(path.Child("logLevel"), string(*rl.LogLevel), rateLimitLogLevels...)...)
	}
	if rl.RejectCode != nil {
		errs = append(errs, intRange(path.Child("rejectCode"), int64(*rl.RejectCode), 400, 599)...)
	}
	if rl.Local != nil {
		rules := path.Child("local", "rules")
		if len(rl.Local.Rules) > MaxRateLimitRules {
			errs = append(errs, field.TooMany(rules, len(rl.Local.Rules), MaxRateLimitRules))
		}
		for i, r := range rl.Local.Rules {
			errs = append(errs, rateLimitRule(rules.Index(i), r)...)
		}
	}
	return errs
}

// rateLimitTargetRefs checks targetRefs with TargetRefs' rules, which are
// NGINX Gateway Fabric's for this kind too, reporting them with its words,
// and with its rule against mixing Gateways and routes (which, unlike
// TargetRefsNotMixed's, leaves other kinds to the kind rule).
func rateLimitTargetRefs(path *field.Path, refs []gatewayv1.LocalPolicyTargetReference) field.ErrorList {
	ngf := map[string]string{
		MsgTargetKinds:  MsgTargetRefKind,
		MsgTargetGroup:  MsgRateLimitTargetGroup,
		MsgTargetUnique: MsgRateLimitTargetUnique,
	}
	errs := TargetRefs(path, refs)
	for _, e := range errs {
		if m, ok := ngf[e.Detail]; ok && e.Field == path.String() {
			e.Detail = m
		}
	}
	gateways, routes := false, false
	for _, r := range refs {
		switch r.Kind {
		case v1alpha1.KindGateway:
			gateways = true
		case v1alpha1.KindHTTPRoute, v1alpha1.KindGRPCRoute:
			routes = true
		}
	}
	if gateways && routes {
		errs = append(errs, field.Invalid(path, "array", MsgRateLimitTargetMixed))
	}
	return errs
}

// MaxZoneSize is the largest shared memory zone a policy may ask for, 1g:
// NGINX maps every zone when it reads its configuration, and fails to start
// when it cannot (9999g did on a 24 GiB machine).
const MaxZoneSize = 1 << 30

// zoneSize checks the size of a shared memory zone: the CRD's maxLength,
// the ByteSize pattern, the 32k minimum and the 1g maximum (tooSmall and
// tooLarge are the kind's messages).
func zoneSize(path *field.Path, z, tooSmall, tooLarge string) field.ErrorList {
	var errs field.ErrorList
	if utf8.RuneCountInString(z) > MaxZoneSizeLength {
		errs = append(errs, field.TooLong(path, z, MaxZoneSizeLength))
	}
	n, err := ParseByteSize(z)
	switch {
	case err != nil:
		errs = append(errs, field.Invalid(path, z, err.Error()))
	case n < MinRateLimitZoneSize:
		errs = append(errs, field.Invalid(path, z, tooSmall))
	case n > MaxZoneSize:
		errs = append(errs, field.Invalid(path, z, tooLarge))
	}
	return errs
}

func rateLimitRule(path *field.Path, r v1alpha1.RateLimitRule) field.ErrorList {
	var errs field.ErrorList
	if z := r.ZoneSize; z != nil {
		errs = append(errs, zoneSize(path.Child("zoneSize"), string(*z), MsgZoneSizeTooSmall, MsgZoneSizeTooLarge)...)
	}
	if r.Delay != nil {
		errs = append(errs, intRange(path.Child("delay"), int64(*r.Delay), 0, math.MaxInt32)...)
	}
	if r.Burst != nil {
		errs = append(errs, intRange(path.Child("burst"), int64(*r.Burst), 0, math.MaxInt32)...)
	}
	if r.NoDelay != nil && *r.NoDelay && r.Delay != nil {
		errs = append(errs, field.Invalid(path, "object", MsgNoDelayWithDelay))
	}
	if utf8.RuneCountInString(string(r.Rate)) > MaxRateLength {
		errs = append(errs, field.TooLong(path.Child("rate"), string(r.Rate), MaxRateLength))
	}
	if _, _, err := ParseRate(string(r.Rate)); err != nil {
		errs = append(errs, field.Invalid(path.Child("rate"), string(r.Rate), err.Error()))
	}
	errs = append(errs, rateLimitKey(path.Child("key"), r.Key)...)
	return errs
}

// rateLimitKey checks a key with each of the CRD's rules, as the API server
// does: its length, its pattern, quotes and backslashes, and its variables.
func rateLimitKey(path *field.Path, key string) field.ErrorList {
	var errs field.ErrorList
	// The API server counts characters, not bytes.
	if utf8.RuneCountInString(key) > MaxRateLimitKeyLength {
		errs = append(errs, field.TooLong(path, key, MaxRateLimitKeyLength))
	}
	errs = append(errs, matches(path, key, rateLimitKeyRE)...)
	if strings.ContainsAny(key, `"'\`) {
		errs = append(errs, field.Invalid(path, key, MsgKeyQuotes))
	}
	// Each $ and the letters, digits and underscores after it, as NGINX reads
	// a variable's name; a $ without a name is refused too, as in the CRD.
	for _, v := range keyVariableRE.FindAllString(key, -1) {
		if !RateLimitKeyVariable(v[1:]) {
			errs = append(errs, field.Invalid(path, key, MsgKeyVariables))
			break
		}
	}
	return errs
}

// ParseRate returns the number of requests of a Rate value such as 10r/s or
// 30r/m, and whether it is per minute rather than per second. The number is
// from 1 to 999999999, without leading zeros.
func ParseRate(s string) (n int64, perMinute bool, err error) {
	if !rateRE.MatchString(s) {
		return 0, false, fmt.Errorf("should match '%s'", RatePattern)
	}
	if !rateRangeRE.MatchString(s) {
		return 0, false, errors.New(MsgRateRange)
	}
	n, err = strconv.ParseInt(strings.TrimSuffix(s[:len(s)-1], "r/"), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("invalid rate %q: %w", s, err)
	}
	return n, strings.HasSuffix(s, "m"), nil
}
