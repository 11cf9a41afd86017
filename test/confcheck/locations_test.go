package confcheck

import "testing"

// TestGRPCMethodRegexNeedsEveryDelimiter: a gRPC method match is anchored
// at both ends and each of its parts is parenthesised or [^/]+; one
// delimiter missing is not one (the first of each pair went unchecked).
func TestGRPCMethodRegexNeedsEveryDelimiter(t *testing.T) {
	for re, want := range map[string]bool{
		"^/(svc)/(m)$":   true,
		"^/[^/]+/(m)$":   true,
		"/(svc)/(m)$":    false,
		"^/(svc)/(m)":    false,
		"^/svc)/(m)$":    false,
		"^/(svc)/(m$":    false,
		"^/(svc)/[^/]+$": true,
		"^/(svc)(m)$":    false,
	} {
		if got := grpcMethodRegex(re); got != want {
			t.Errorf("grpcMethodRegex(%q) = %v, want %v", re, got, want)
		}
	}
}
