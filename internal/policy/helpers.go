package policy

// Small helpers every kind's settings use.

// pick is b when set, else a: an inherited setting that a more specific
// policy (b) overrides.
func pick[T any](a, b *T) *T {
	if b != nil {
		return b
	}
	return a
}

// onOff is an NGINX flag's value.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
