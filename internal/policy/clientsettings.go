package policy

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=clientsettingspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=clientsettingspolicies/status,verbs=get;update;patch

// clientSettingsKind is ClientSettingsPolicy: how NGINX treats client
// connections and request bodies.
var clientSettingsKind Kind = &inherited[ClientSettings]{
	gatewallKind: "ClientSettingsPolicy",
	affected:     v1alpha1.ClientSettingsPolicyAffected,
	include:      "client-settings",
	targetsField: "targetRef",
	noun:         "client settings",
	newObject:    func() v1alpha1.PolicyWithStatus { return &v1alpha1.ClientSettingsPolicy{} },
	newList:      func() client.ObjectList { return &v1alpha1.ClientSettingsPolicyList{} },
	parse:        parseClientSettings,
	gateway:      func(gw ClientSettings) ([]string, error) { return gw.directives(), nil },
	route: func(rt routeTarget[ClientSettings]) ([]string, *targetIssue) {
		// Every directive is valid in a location, whatever the pass.
		return rt.local.directives(), nil
	},
}

// MinTimeoutIgnored is what a ClientSettingsPolicy with keepAlive.minTimeout
// is told: the data plane's NGINX has no such directive.
const MinTimeoutIgnored = "keepAlive.minTimeout is not applied: it needs keepalive_min_timeout (NGINX 1.27.4 and later), and Gatewall's data plane runs NGINX 1.22"

// ClientSettings are the settings of ClientSettingsPolicies: each field is
// the NGINX value to render, nil when unset. The keep-alive timeout and its
// header value are one field (one directive).
type ClientSettings struct {
	MaxSize, BufferSize, BodyTimeout *string
	Requests                         *int32
	Time                             *string
	Timeout                          *keepAliveTimeout
}

type keepAliveTimeout struct {
	server string
	header string // "" when not set
}

// parseClientSettings re-checks a policy's CRD rules and turns it into
// NGINX values. Sizes are written in bytes, k or m: NGINX's
// client_body_buffer_size does not take the g suffix.
func parseClientSettings(o v1alpha1.Policy) (ClientSettings, string, error) {
	p := o.(*v1alpha1.ClientSettingsPolicy)
	if errs := validation.ClientSettingsPolicy(p); len(errs) > 0 {
		return ClientSettings{}, "", errs.ToAggregate()
	}
	var s ClientSettings
	size := func(v *v1alpha1.ByteSize) (*string, error) {
		if v == nil {
			return nil, nil
		}
		n, err := validation.ParseByteSize(string(*v))
		if err != nil {
			return nil, err
		}
		h := human(n)
		return &h, nil
	}
	duration := func(v *v1alpha1.Duration) *string {
		if v == nil {
			return nil
		}
		d := string(*v)
		return &d
	}
	if b := p.Spec.Body; b != nil {
		var err error
		if s.MaxSize, err = size(b.MaxSize); err != nil {
			return ClientSettings{}, "", fmt.Errorf("spec.body.maxSize: %w", err)
		}
		if s.BufferSize, err = size(b.BufferSize); err != nil {
			return ClientSettings{}, "", fmt.Errorf("spec.body.bufferSize: %w", err)
		}
		s.BodyTimeout = duration(b.Timeout)
	}
	ignored := ""
	if k := p.Spec.KeepAlive; k != nil {
		s.Requests = k.Requests
		s.Time = duration(k.Time)
		if t := k.Timeout; t != nil && t.Server != nil {
			s.Timeout = &keepAliveTimeout{server: string(*t.Server)}
			if t.Header != nil {
				s.Timeout.header = string(*t.Header)
			}
		}
		if k.MinTimeout != nil {
			ignored = MinTimeoutIgnored
		}
	}
	return s, ignored, nil
}

func (s ClientSettings) fields() []string {
	return setFields([]fieldSet{
		{"body.maxSize", s.MaxSize != nil},
		{"body.bufferSize", s.BufferSize != nil},
		{"body.timeout", s.BodyTimeout != nil},
		{"keepAlive.requests", s.Requests != nil},
		{"keepAlive.time", s.Time != nil},
		{"keepAlive.timeout", s.Timeout != nil},
	})
}

func (s ClientSettings) overlay(o ClientSettings) ClientSettings {
	s.MaxSize, s.BufferSize, s.BodyTimeout = pick(s.MaxSize, o.MaxSize), pick(s.BufferSize, o.BufferSize), pick(s.BodyTimeout, o.BodyTimeout)
	s.Time, s.Requests, s.Timeout = pick(s.Time, o.Time), pick(s.Requests, o.Requests), pick(s.Timeout, o.Timeout)
	return s
}

// directives renders the set fields; each is valid at http level and in
// a location.
func (s ClientSettings) directives() []string {
	var out []string
	add := func(v *string, directive string) {
		if v != nil {
			out = append(out, directive+" "+*v+";")
		}
	}
	add(s.MaxSize, "client_max_body_size")
	add(s.BufferSize, "client_body_buffer_size")
	add(s.BodyTimeout, "client_body_timeout")
	if s.Requests != nil {
		out = append(out, fmt.Sprintf("keepalive_requests %d;", *s.Requests))
	}
	add(s.Time, "keepalive_time")
	if t := s.Timeout; t != nil {
		v := t.server
		if t.header != "" {
			v += " " + t.header
		}
		out = append(out, "keepalive_timeout "+v+";")
	}
	return out
}
