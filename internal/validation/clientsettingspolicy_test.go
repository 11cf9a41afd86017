package validation_test

import (
	"testing"
	"time"

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

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "30": 30 * time.Second, "9999": 9999 * time.Second,
		"500ms": 500 * time.Millisecond, "0ms": 0, "60s": time.Minute, "5m": 5 * time.Minute,
		"1h": time.Hour, "9999h": 9999 * time.Hour,
	} {
		got, err := validation.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "s", "ms", "5d", "12345s", "12345", "1.5s", "-1s", "1S", "1H", "1 s", "1us", "1m30s", "5s\n"} {
		if d, err := validation.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}
