package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// NGINX's proxy buffering defaults on the data plane's platform (x86-64,
// 4 KiB pages): proxy_buffer_size one page, proxy_buffers 8 pages, and
// proxy_max_temp_file_size 1024m, which caps the larger of the buffer sizes
// (the same bound the API puts on buffers.size).
const (
	PageSize           = 4096
	DefaultBuffers     = 8
	MaxTempFileSize    = validation.MaxBuffersSize
	defaultBufferSizeS = "4k"
)

// Buffering is a set of buffering fields; nil fields are unset.
type Buffering struct {
	Disable    *bool
	BufferSize *sized
	Buffers    *buffers
	Busy       *sized
}

// sized is a size with the text it was written as.
type sized struct {
	bytes int64
	text  string
}

type buffers struct {
	number int64
	size   sized
}

func parseSized(s v1alpha1.Size) (*sized, error) {
	n, err := validation.ParseSize(string(s))
	if err != nil {
		return nil, err
	}
	return &sized{bytes: n, text: string(s)}, nil
}

// fromSpec converts a valid policy's buffering.
func fromSpec(b *v1alpha1.ProxyBuffering) (Buffering, error) {
	var out Buffering
	if b == nil {
		return out, nil
	}
	out.Disable = b.Disable
	var err error
	if b.BufferSize != nil {
		if out.BufferSize, err = parseSized(*b.BufferSize); err != nil {
			return out, err
		}
	}
	if b.BusyBuffersSize != nil {
		if out.Busy, err = parseSized(*b.BusyBuffersSize); err != nil {
			return out, err
		}
	}
	if b.Buffers != nil {
		s, err := parseSized(b.Buffers.Size)
		if err != nil {
			return out, err
		}
		out.Buffers = &buffers{number: int64(b.Buffers.Number), size: *s}
	}
	return out, nil
}

// fields lists the fields a Buffering sets, in a fixed order.
func (b Buffering) fields() []string {
	return setFields([]fieldSet{
		{"disable", b.Disable != nil},
		{"bufferSize", b.BufferSize != nil},
		{"buffers", b.Buffers != nil},
		{"busyBuffersSize", b.Busy != nil},
	})
}

// sizesSet says whether any size field is set.
func (b Buffering) sizesSet() bool {
	return b.BufferSize != nil || b.Buffers != nil || b.Busy != nil
}

// overlay returns b with the fields other sets replaced (other wins).
func (b Buffering) overlay(other Buffering) Buffering {
	b.Disable, b.BufferSize = pick(b.Disable, other.Disable), pick(b.BufferSize, other.BufferSize)
	b.Buffers, b.Busy = pick(b.Buffers, other.Buffers), pick(b.Busy, other.Busy)
	return b
}

// CheckProxy returns why NGINX would reject the proxy buffering of a location
// whose own settings are local, under inherited settings, with NGINX's
// defaults for what neither sets; nil when NGINX accepts it. These checks run
// whatever proxy_buffering says.
func CheckProxy(local, inherited Buffering) error {
	eff := inherited.overlay(local)
	bufSize := sized{bytes: PageSize, text: defaultBufferSizeS + " (default)"}
	if eff.BufferSize != nil {
		bufSize = *eff.BufferSize
	}
	bufs := buffers{number: DefaultBuffers, size: sized{bytes: PageSize, text: defaultBufferSizeS}}
	bufsText := fmt.Sprintf("%d %s (default)", DefaultBuffers, defaultBufferSizeS)
	if eff.Buffers != nil {
		bufs = *eff.Buffers
		bufsText = fmt.Sprintf("%d %s", bufs.number, bufs.size.text)
	}
	largest, largestText := bufSize.bytes, "proxy_buffer_size "+bufSize.text
	if bufs.size.bytes > largest {
		largest, largestText = bufs.size.bytes, "one of proxy_buffers "+bufsText
	}
	if largest > MaxTempFileSize {
		return fmt.Errorf("the larger of proxy_buffer_size and one proxy_buffers buffer (%s) may not exceed 1024m, NGINX's proxy_max_temp_file_size", largestText)
	}
	busy, busyText := 2*largest, fmt.Sprintf("%s (default: twice %s)", human(2*largest), largestText)
	if eff.Busy != nil {
		busy, busyText = eff.Busy.bytes, eff.Busy.text
	}
	if busy < largest {
		return fmt.Errorf("proxy_busy_buffers_size %s must be at least %s", busyText, largestText)
	}
	if limit := (bufs.number - 1) * bufs.size.bytes; busy > limit {
		return fmt.Errorf("proxy_busy_buffers_size %s must be at most %s, the size of proxy_buffers %s minus one buffer", busyText, human(limit), bufsText)
	}
	return nil
}

// human writes a byte count in NGINX size syntax.
func human(n int64) string {
	switch {
	case n%(1024*1024) == 0 && n > 0:
		return fmt.Sprintf("%dm", n/(1024*1024))
	case n%1024 == 0 && n > 0:
		return fmt.Sprintf("%dk", n/1024)
	}
	return fmt.Sprint(n)
}

// proxyDirectives renders buffering for proxy_pass locations (or http).
func proxyDirectives(b Buffering) []config.Directive {
	var out []config.Directive
	if b.Disable != nil {
		out = append(out, config.D("proxy_buffering", onOff(!*b.Disable)))
	}
	if b.BufferSize != nil {
		out = append(out, config.D("proxy_buffer_size", b.BufferSize.text))
	}
	if b.Buffers != nil {
		out = append(out, config.D("proxy_buffers", strconv.FormatInt(b.Buffers.number, 10), b.Buffers.size.text))
	}
	if b.Busy != nil {
		out = append(out, config.D("proxy_busy_buffers_size", b.Busy.text))
	}
	return out
}

// pinnedDefaults are the http-level directives that write out NGINX's
// page-dependent defaults (proxy_buffer_size one page, proxy_buffers 8
// pages) as CheckProxy assumes them, 4 KiB pages, for what the Gateway's
// settings leave unset — once any proxy buffer size is rendered for the
// Gateway. A data plane with larger pages (arm64 kernels with 16 or 64 KiB
// pages) then applies exactly what was checked: under its own defaults, a
// route's "buffers: 4 4k" would make NGINX's default busy size (twice a
// 64k buffer_size) exceed the buffers, and NGINX would reject the
// configuration. Without a rendered size, NGINX's defaults are consistent
// on every platform and stay untouched.
func pinnedDefaults(gw Buffering, res *Result) []config.Directive {
	if !rendersSizes(res) {
		return nil
	}
	var out []config.Directive
	if gw.BufferSize == nil {
		out = append(out, config.D("proxy_buffer_size", defaultBufferSizeS))
	}
	if gw.Buffers == nil {
		out = append(out, config.D("proxy_buffers", strconv.Itoa(DefaultBuffers), defaultBufferSizeS))
	}
	return out
}

// rendersSizes says whether any proxy buffer size is rendered.
func rendersSizes(res *Result) bool {
	sizes := func(dirs []config.Directive) bool {
		return slices.ContainsFunc(dirs, func(d config.Directive) bool {
			switch d.Name {
			case "proxy_buffer_size", "proxy_buffers", "proxy_busy_buffers_size":
				return true
			}
			return false
		})
	}
	if sizes(res.HTTP) {
		return true
	}
	for _, dirs := range res.Routes {
		if sizes(dirs) {
			return true
		}
	}
	return false
}

// grpcDirectives renders what has an effect under grpc_pass: the buffer for
// the first part of the response.
func grpcDirectives(b Buffering) []config.Directive {
	if b.BufferSize == nil {
		return nil
	}
	return []config.Directive{config.D("grpc_buffer_size", b.BufferSize.text)}
}

// MaxGRPCBufferSize caps grpc_buffer_size, which NGINX allocates for every
// request it passes with grpc_pass; NGINX itself sets no bound, so a huge
// value passes `nginx -t` and then fails every request. The cap is the one
// proxy_buffer_size has (proxy_max_temp_file_size's default, see
// CheckProxy), so bufferSize has one bound whatever the route's backends
// speak, and a Gateway's bufferSize, which sets both at http level, is valid
// for every route.
const MaxGRPCBufferSize = MaxTempFileSize

// checkGRPC returns why the settings of a location proxied with grpc_pass
// are refused; nil when they are not.
func checkGRPC(b Buffering) error {
	if b.BufferSize != nil && b.BufferSize.bytes > MaxGRPCBufferSize {
		return fmt.Errorf("grpc_buffer_size %s (bufferSize) may not exceed %s: NGINX allocates it for every request, and bufferSize has the same limit under proxy_pass", b.BufferSize.text, human(MaxGRPCBufferSize))
	}
	return nil
}

// grpcIneffective lists the fields that do nothing under grpc_pass.
func grpcIneffective(b Buffering) string {
	var f []string
	for _, name := range b.fields() {
		if name != "bufferSize" {
			f = append(f, name)
		}
	}
	return strings.Join(f, ", ")
}
