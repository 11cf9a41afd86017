package validation

import (
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Messages of the security log rules, identical to the CRD's CEL messages.
const (
	MsgFileIffFile     = "file must be set when type is File, and only then"
	MsgSyslogIffSyslog = "syslog must be set when type is Syslog, and only then"
	MsgSyslogPort      = "port must be between 1 and 65535"
	MsgSyslogHost      = "host must be a DNS name or an IPv4 address"
)

// maxSecurityLogs is the CRD's maxItems of spec.securityLogs.
const maxSecurityLogs = 16

// WAFGatewayBindingPolicy re-checks a WAFGatewayBindingPolicy against its CRD's rules.
func WAFGatewayBindingPolicy(p *v1alpha1.WAFGatewayBindingPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	errs := TargetRefs(spec.Child("targetRefs"), p.Spec.TargetRefs)
	errs = append(errs, TargetRefsNotMixed(spec.Child("targetRefs"), p.Spec.TargetRefs)...)
	errs = append(errs, plmReference(spec.Child("apPolicySource"), p.Spec.APPolicySource)...)
	logs := spec.Child("securityLogs")
	if len(p.Spec.SecurityLogs) > maxSecurityLogs {
		errs = append(errs, field.TooMany(logs, len(p.Spec.SecurityLogs), maxSecurityLogs))
	}
	for i, l := range p.Spec.SecurityLogs {
		path := logs.Index(i)
		if l.Name != nil {
			errs = append(errs, DNS1123Label(path.Child("name"), *l.Name)...)
		}
		errs = append(errs, plmReference(path.Child("apLogConfSource"), l.APLogConfSource)...)
		errs = append(errs, SecurityLogDestination(path.Child("destination"), l.Destination)...)
	}
	return errs
}

func plmReference(path *field.Path, r v1alpha1.PLMObjectReference) field.ErrorList {
	errs := DNS1123Subdomain(path.Child("name"), r.Name)
	if r.Namespace != nil {
		errs = append(errs, DNS1123Label(path.Child("namespace"), *r.Namespace)...)
	}
	return errs
}

// SecurityLogDestination checks a destination: its type, that file and syslog
// are set exactly for their types, and the allow-lists of paths and servers
// (both end up in nginx.conf).
func SecurityLogDestination(path *field.Path, d v1alpha1.SecurityLogDestination) field.ErrorList {
	var errs field.ErrorList
	switch d.Type {
	case "", v1alpha1.SecurityLogDestinationStderr, v1alpha1.SecurityLogDestinationFile,
		v1alpha1.SecurityLogDestinationSyslog:
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), d.Type, []string{
			string(v1alpha1.SecurityLogDestinationStderr), string(v1alpha1.SecurityLogDestinationFile),
			string(v1alpha1.SecurityLogDestinationSyslog),
		}))
	}
	if (d.Type == v1alpha1.SecurityLogDestinationFile) != (d.File != nil) {
		errs = append(errs, field.Invalid(path, "object", MsgFileIffFile))
	}
	if (d.Type == v1alpha1.SecurityLogDestinationSyslog) != (d.Syslog != nil) {
		errs = append(errs, field.Invalid(path, "object", MsgSyslogIffSyslog))
	}
	if d.File != nil {
		errs = append(errs, stringField(path.Child("file", "path"), d.File.Path, 0, 128, securityLogFileRE)...)
	}
	if d.Syslog != nil {
		errs = append(errs, SyslogServer(path.Child("syslog", "server"), d.Syslog.Server)...)
	}
	return errs
}

// SyslogServer checks a syslog server, host:port. A host whose last label is
// all digits is no DNS name (top-level domains are never all-numeric), so it
// must be an IPv4 address: 999.999.999.999 and 10.1 are refused.
func SyslogServer(path *field.Path, server string) field.ErrorList {
	if errs := stringField(path, server, 0, 259, syslogServerRE); len(errs) > 0 {
		return errs
	}
	colon := strings.LastIndexByte(server, ':')
	host := server[:colon]
	if isDigits(host[strings.LastIndexByte(host, '.')+1:]) {
		if addr, err := netip.ParseAddr(host); err != nil || !addr.Is4() {
			return field.ErrorList{field.Invalid(path, server, MsgSyslogHost)}
		}
	}
	port, err := strconv.Atoi(server[colon+1:])
	if err != nil || port < 1 || port > 65535 {
		return field.ErrorList{field.Invalid(path, server, MsgSyslogPort)}
	}
	return nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
