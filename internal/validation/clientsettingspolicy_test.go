package validation_test

import (
	"testing"

	"github.com/gatewall/gatewall/internal/validation"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1": 1, "512": 512, "9999": 9999,
		"1k": 1 << 10, "8k": 8 << 10, "10m": 10 << 20, "1g": 1 << 30, "9999g": 9999 << 30, "0m": 0,
	} {
		got, err := validation.ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "10x", "12345", "12345k", "1t", "1K", "1M", "1G", "1.5k", "-1", "1 k", "1kb", "8k\n", "+1k"} {
		if n, err := validation.ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", in, n)
		}
	}
}
