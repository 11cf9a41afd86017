package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes: the cut falls inside a rune
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "abc", `"abc"`},
		{"empty", "", `""`},
		{"control characters and quotes", "a\"b\nc\x00", `"a\"b\nc\x00"`},
		{"invalid UTF-8", "a\xffb", `"a\xffb"`},
		{"exactly the limit", strings.Repeat("a", 64), `"` + strings.Repeat("a", 64) + `"`},
		{"longer than the limit", strings.Repeat("a", 65), `"` + strings.Repeat("a", 64) + `"... (65 bytes)`},
		{"cut at a rune boundary", long, `"` + strings.Repeat("é", 32) + `"... (80 bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in); got != tc.want {
				t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestMessagesAreTruncatedAtRuneBoundaries(t *testing.T) {
	msg := "x" + strings.Repeat("é", MaxMessageLength)
	c := False("T", "R", msg)
	if len(c.Message) > MaxMessageLength || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, "(truncated)") {
		t.Errorf("message of %d bytes, valid UTF-8 %v, ends %q", len(c.Message), utf8.ValidString(c.Message), c.Message[len(c.Message)-20:])
	}
}
