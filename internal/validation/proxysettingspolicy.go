package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Messages of the buffering rules, identical to the CRD's CEL messages.
const (
	MsgBusyBelowBufferSize  = "busyBuffersSize must be greater than or equal to bufferSize"
	MsgBusyBelowBuffersSize = "busyBuffersSize must be greater than or equal to buffers.size"
	MsgBusyAboveBuffers     = "busyBuffersSize must be less than or equal to the size of all buffers minus one buffer"
	MsgBuffersSizeZero      = "buffers.size must be greater than 0"
	MsgBuffersSizeTooLarge  = "buffers.size must be at most 1024m, NGINX's proxy_max_temp_file_size"
)

// Limits of buffers.number.
const (
	MinBuffersNumber = 2
	MaxBuffersNumber = 256
)

// ProxySettingsPolicy re-checks a ProxySettingsPolicy against its CRD's rules.
// It does not check the effective settings a policy combines into; the policy
// package does that with the Gateway's policy and NGINX's defaults.
func ProxySettingsPolicy(p *v1alpha1.ProxySettingsPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	errs := TargetRefs(spec.Child("targetRefs"), p.Spec.TargetRefs)
	if b := p.Spec.Buffering; b != nil {
		errs = append(errs, buffering(spec.Child("buffering"), b)...)
	}
	return errs
}

func buffering(path *field.Path, b *v1alpha1.ProxyBuffering) field.ErrorList {
	var errs field.ErrorList
	size := func(p *field.Path, s *v1alpha1.Size) (int64, bool) {
		if s == nil {
			return 0, false
		}
		n, err := ParseSize(string(*s))
		if err != nil {
			errs = append(errs, field.Invalid(p, string(*s), err.Error()))
			return 0, false
		}
		return n, true
	}
	bufferSize, hasBufferSize := size(path.Child("bufferSize"), b.BufferSize)
	busy, hasBusy := size(path.Child("busyBuffersSize"), b.BusyBuffersSize)
	var bufSize int64
	hasBuffers := false
	if b.Buffers != nil {
		n := b.Buffers.Number
		errs = append(errs, intRange(path.Child("buffers", "number"), int64(n), MinBuffersNumber, MaxBuffersNumber)...)
		s := b.Buffers.Size
		bufSize, hasBuffers = size(path.Child("buffers", "size"), &s)
		if hasBuffers && bufSize == 0 {
			errs = append(errs, field.Invalid(path.Child("buffers"), "object", MsgBuffersSizeZero))
		}
		if hasBuffers && bufSize > MaxBuffersSize {
			errs = append(errs, field.Invalid(path.Child("buffers"), "object", MsgBuffersSizeTooLarge))
		}
	}
	if hasBusy && hasBufferSize && busy < bufferSize {
		errs = append(errs, field.Invalid(path, "object", MsgBusyBelowBufferSize))
	}
	if hasBusy && hasBuffers && busy < bufSize {
		errs = append(errs, field.Invalid(path, "object", MsgBusyBelowBuffersSize))
	}
	// As in the CRD, the product is only computed for a size within its limit,
	// so it cannot overflow.
	if hasBusy && hasBuffers && bufSize <= MaxBuffersSize && busy > (int64(b.Buffers.Number)-1)*bufSize {
		errs = append(errs, field.Invalid(path, "object", MsgBusyAboveBuffers))
	}
	return errs
}
