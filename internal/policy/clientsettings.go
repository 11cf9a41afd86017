package policy

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
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
	gateway:      func(gw ClientSettings) ([]config.Directive, error) { return gw.directives(), nil },
	route:        routeClientSettings,
	admit:        admitClientSettings,
}

// admitClientSettings checks a Gateway's body budgets. A policy's
// body.bufferSize is held in memory for each connection a worker may have
// (workerConnections): it must fit BodyBufferBudget (NGINX's own 16k
// always does). A route's policy may not set body.maxSize over
// MaxBodySizeCeiling, or the Gateway's own maxSize when that is larger (0:
// none), a body larger than its buffer being written to the data plane's
// disk; a GRPCRoute's may (grpc_pass streams bodies to the backend).
func admitClientSettings(g *Gateway, here []*state[ClientSettings]) map[*state[ClientSettings]]string {
	out := map[*state[ClientSettings]]string{}
	conns := int64(ptr.Deref(g.NginxProxy.WorkerConnections, v1alpha2.DefaultWorkerConnections))
	bufferCap := max(BodyBufferBudget/conns, nginxBodyBuffer)
	gwRef := gatewayRef(g)
	ceiling := MaxBodySizeCeiling // 0: none
	bufferOver := func(s *state[ClientSettings]) string {
		n := bytesOf(s.settings.BufferSize)
		if n <= bufferCap {
			return ""
		}
		return fmt.Sprintf("body.bufferSize %s would let NGINX hold %s of request bodies in memory in each worker of Gateway %s (%s for each of its %d connections, workerConnections), over its budget of %s per worker: at most %s here",
			*s.settings.BufferSize, readable(n*conns), g.Key, *s.settings.BufferSize, conns, readable(BodyBufferBudget), readable(bufferCap))
	}
	for _, s := range here { // the Gateway's own first: they set the ceiling
		if !slices.Contains(s.targets, gwRef) {
			continue
		}
		if why := bufferOver(s); why != "" {
			out[s] = why
			continue
		}
		if m := s.settings.MaxSize; m != nil && ceiling != 0 {
			if n := bytesOf(m); n == 0 || n > ceiling {
				ceiling = n
			}
		}
	}
	for _, s := range here {
		if slices.Contains(s.targets, gwRef) {
			continue
		}
		if why := bufferOver(s); why != "" {
			out[s] = why
			continue
		}
		m := s.settings.MaxSize
		if m == nil || ceiling == 0 || slices.ContainsFunc(s.targets, func(t graph.ObjectRef) bool { return t.Kind == graph.KindGRPCRoute }) {
			continue
		}
		if n := bytesOf(m); n == 0 || n > ceiling {
			out[s] = fmt.Sprintf("body.maxSize %s is over the largest request body a route's policy may allow on Gateway %s, %s: a body larger than its buffer is written to the data plane's disk (a ClientSettingsPolicy on the Gateway with a larger maxSize raises it)",
				bodyLimit(*m), g.Key, readable(ceiling))
		}
	}
	return out
}

// bodyLimit names a maxSize in messages.
func bodyLimit(m string) string {
	if m == "0" {
		return "0 (no limit)"
	}
	return readable(bytesOf(&m))
}

// routeClientSettings renders a route's own client settings for its
// locations, where every directive is valid whatever the pass. But NGINX
// reads the keep-alive settings of an HTTP/2 connection from the server
// the connection arrived at (the Gateway's settings, at http level), never
// from a location: a route's keepAlive governs its HTTP/1.x connections
// only. A GRPCRoute has none (gRPC runs over HTTP/2), so it gets no
// keep-alive directives; an HTTPRoute whose clients may speak HTTP/2 keeps
// them for its HTTP/1.x clients. The policy says which.
func routeClientSettings(rt routeTarget[ClientSettings]) ([]config.Directive, *targetIssue) {
	local := rt.local
	set := local.keepAliveFields()
	if len(set) == 0 {
		return local.directives(), nil
	}
	why := "NGINX keeps an HTTP/2 connection alive by the settings of the server it arrived at (the keepAlive of the Gateway's ClientSettingsPolicy, else NGINX's defaults), never by a route's"
	if rt.ref.Kind == graph.KindGRPCRoute {
		return local.withoutKeepAlive().directives(), &targetIssue{target: rt.ref,
			msg: fmt.Sprintf("keepAlive (%s) cannot apply to %s: gRPC runs over HTTP/2, and %s", strings.Join(set, ", "), rt.ref, why)}
	}
	if ls := http2Listeners(rt.g, rt.route); len(ls) > 0 {
		return local.directives(), &targetIssue{target: rt.ref,
			msg: fmt.Sprintf("keepAlive (%s) of %s governs its HTTP/1.x connections only: its clients may speak HTTP/2 on %s %s, and %s",
				strings.Join(set, ", "), rt.ref, plural(len(ls), "listener", "listeners"), strings.Join(ls, ", "), why)}
	}
	return local.directives(), nil
}

// http2Listeners are the listeners (IDs, sorted) of a route on which its
// clients may speak HTTP/2: its HTTPS listeners (clients negotiate h2),
// and its HTTP listeners on a port where some route wants h2c (NGINX then
// takes HTTP/2 connections there beside HTTP/1.x ones).
func http2Listeners(g *Gateway, r *graph.Route) []string {
	h2cPorts := map[gatewayv1.PortNumber]bool{}
	for _, other := range g.attached {
		if !other.SpeaksH2C() {
			continue
		}
		for _, p := range other.Parents {
			for _, a := range p.Attachments {
				if a.Listener.Valid {
					h2cPorts[a.Listener.Source.Port] = true
				}
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range r.Parents {
		for _, a := range p.Attachments {
			l := a.Listener
			h2 := l.Source.Protocol == gatewayv1.HTTPSProtocolType ||
				(l.Source.Protocol == gatewayv1.HTTPProtocolType && h2cPorts[l.Source.Port])
			if l.Valid && h2 && !seen[l.ID] {
				seen[l.ID] = true
				out = append(out, l.ID)
			}
		}
	}
	sort.Strings(out)
	return out
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

// keepAliveFields names the fields of keepAlive that are set (minTimeout
// is never rendered: MinTimeoutIgnored).
func (s ClientSettings) keepAliveFields() []string {
	return setFields([]fieldSet{{"requests", s.Requests != nil}, {"time", s.Time != nil}, {"timeout", s.Timeout != nil}})
}

// withoutKeepAlive are the settings with the keep-alive fields unset.
func (s ClientSettings) withoutKeepAlive() ClientSettings {
	s.Requests, s.Time, s.Timeout = nil, nil, nil
	return s
}

func (s ClientSettings) overlay(o ClientSettings) ClientSettings {
	s.MaxSize, s.BufferSize, s.BodyTimeout = pick(s.MaxSize, o.MaxSize), pick(s.BufferSize, o.BufferSize), pick(s.BodyTimeout, o.BodyTimeout)
	s.Time, s.Requests, s.Timeout = pick(s.Time, o.Time), pick(s.Requests, o.Requests), pick(s.Timeout, o.Timeout)
	return s
}

// directives renders the set fields; each is valid at http level and in
// a location.
func (s ClientSettings) directives() []config.Directive {
	var out []config.Directive
	add := func(v *string, directive string) {
		if v != nil {
			out = append(out, config.D(directive, *v))
		}
	}
	add(s.MaxSize, "client_max_body_size")
	add(s.BufferSize, "client_body_buffer_size")
	add(s.BodyTimeout, "client_body_timeout")
	if s.Requests != nil {
		out = append(out, config.D("keepalive_requests", strconv.Itoa(int(*s.Requests))))
	}
	add(s.Time, "keepalive_time")
	if t := s.Timeout; t != nil {
		args := []string{t.server}
		if t.header != "" {
			args = append(args, t.header)
		}
		out = append(out, config.D("keepalive_timeout", args...))
	}
	return out
}
