// Package conditions builds the metav1.Conditions Gatewall reports, in one
// place, and merges them into existing status lists. It is pure.
package conditions

import (
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMessageLength keeps messages well inside metav1.Condition's 32768-byte limit.
const MaxMessageLength = 8192

// True returns a condition with status True.
func True(condType, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: truncate(message)}
}

// False returns a condition with status False.
func False(condType, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: reason, Message: truncate(message)}
}

func truncate(msg string) string {
	if len(msg) <= MaxMessageLength {
		return msg
	}
	const more = " ... (truncated)"
	return cut(msg, MaxMessageLength-len(more)) + more
}

// maxQuoted is how much of a value Quote shows.
const maxQuoted = 64

// Quote shows a value a user or another controller wrote in a message:
// Go-quoted, so quotes, control characters and invalid UTF-8 are escaped and
// the reader sees where the value ends; a value longer than 64 bytes shows
// its start and its length. Messages name values that were refused, and a
// refused value must never reach a status raw nor make it long.
func Quote(v string) string {
	if len(v) <= maxQuoted {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(cut(v, maxQuoted)), len(v))
}

// cut returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Set puts c into list, replacing a condition of the same type.
func Set(list []metav1.Condition, c metav1.Condition) []metav1.Condition {
	for i := range list {
		if list[i].Type == c.Type {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// Find returns the condition of the given type, or nil.
func Find(list []metav1.Condition, condType string) *metav1.Condition {
	for i := range list {
		if list[i].Type == condType {
			return &list[i]
		}
	}
	return nil
}

// Merge returns want with observedGeneration set and, for each condition
// whose status did not change, the lastTransitionTime kept from have. now is
// the transition time of changed conditions. The result is sorted by type.
func Merge(have, want []metav1.Condition, generation int64, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
	for _, w := range want {
		w.ObservedGeneration = generation
		w.LastTransitionTime = now
		if h := meta.FindStatusCondition(have, w.Type); h != nil && h.Status == w.Status {
			w.LastTransitionTime = h.LastTransitionTime
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}
