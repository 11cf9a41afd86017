package validation

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Patterns of the CRDs' string fields. The CRD markers repeat them literally
// (markers cannot refer to constants); a test compares the generated CRDs with
// these constants so the two never drift apart.
const (
	// DNS1123SubdomainPattern is an object name: lower-case alphanumerics, '-' and '.'.
	DNS1123SubdomainPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// DNS1123LabelPattern is a namespace name: lower-case alphanumerics and '-'.
	DNS1123LabelPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// SecurityLogFilePattern is a file directly in /var/log/app_protect/.
	SecurityLogFilePattern = `^/var/log/app_protect/[A-Za-z0-9_-][A-Za-z0-9._-]*$`
	// SyslogServerPattern is host:port with a lower-case DNS name (labels of
	// 1-63 characters) or IPv4 host; SyslogServer adds that a host ending in an
	// all-digit label must be an IPv4 address.
	SyslogServerPattern = `^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*:[0-9]{1,5}$`
	// ImageRepositoryPattern is an image repository, optionally with a registry port.
	ImageRepositoryPattern = `^[a-z0-9]([-a-z0-9._]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$`
	// ImageTagPattern is an image tag.
	ImageTagPattern = `^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	// InfrastructureKeyPattern is a prefixed label or annotation key, or a
	// key prefix ending in "/" (NginxProxy allowGatewayOverrides).
	InfrastructureKeyPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
)

var (
	dns1123SubdomainRE  = regexp.MustCompile(DNS1123SubdomainPattern)
	dns1123LabelRE      = regexp.MustCompile(DNS1123LabelPattern)
	securityLogFileRE   = regexp.MustCompile(SecurityLogFilePattern)
	syslogServerRE      = regexp.MustCompile(SyslogServerPattern)
	imageRepositoryRE   = regexp.MustCompile(ImageRepositoryPattern)
	imageTagRE          = regexp.MustCompile(ImageTagPattern)
	infrastructureKeyRE = regexp.MustCompile(InfrastructureKeyPattern)
)

// stringField checks a string against a length range and a pattern, with the
// API server's messages.
func stringField(path *field.Path, s string, minLen, maxLen int, re *regexp.Regexp) field.ErrorList {
	switch {
	case len(s) < minLen:
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("should be at least %d chars long", minLen))}
	case len(s) > maxLen:
		return field.ErrorList{field.TooLong(path, s, maxLen)}
	case re != nil:
		return matches(path, s, re)
	}
	return nil
}

// matches checks a string against a pattern, with the API server's message.
func matches(path *field.Path, s string, re *regexp.Regexp) field.ErrorList {
	if !re.MatchString(s) {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("should match '%s'", re.String()))}
	}
	return nil
}

// objectName checks a Gateway API ObjectName (1-253 bytes).
func objectName(path *field.Path, name string) field.ErrorList {
	return stringField(path, name, 1, 253, nil)
}

// DNS1123Subdomain checks an object name the way the CRDs do.
func DNS1123Subdomain(path *field.Path, name string) field.ErrorList {
	return stringField(path, name, 1, 253, dns1123SubdomainRE)
}

// DNS1123Label checks a namespace name the way the CRDs do.
func DNS1123Label(path *field.Path, name string) field.ErrorList {
	return stringField(path, name, 1, 63, dns1123LabelRE)
}

// intRange checks an integer against an inclusive range, with the API server's messages.
func intRange(path *field.Path, n, minimum, maximum int64) field.ErrorList {
	switch {
	case n < minimum:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("should be greater than or equal to %d", minimum))}
	case n > maximum:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("should be less than or equal to %d", maximum))}
	}
	return nil
}
