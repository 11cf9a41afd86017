package validation

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Limits of NGINX's PCRE2 (Debian builds it with a link size of 2: 64 KiB
// of compiled code, and 250 nested parentheses). A regex gets a share of
// them because Gatewall may embed two user regexes in one (a gRPC service
// and method).
const (
	maxRegexNesting = 100
	maxRegexCode    = 30000
)

// Upper bounds of PCRE2's compiled code units, for pcreDifference's size
// estimate: a character, a class (a 32-byte bitmap), a group's brackets, an
// alternative, a quantifier on a single item, and each copy of a repeated
// group (PCRE2 copies a group once per repetition).
const (
	pcreChar  = 2
	pcreClass = 33
	pcreGroup = 8
	pcreAlt   = 3
	pcreQuant = 8
	pcreCopy  = 3
)

// regexItem is what a quantifier would repeat.
type regexItem int

const (
	itemNone       regexItem = iota // start of a group or alternative, or after a flag group
	itemAtom                        // a character, escape or class
	itemGroup                       // a group
	itemAnchor                      // ^, $, \b, \B, \A, \z
	itemQuantified                  // an item with its quantifier
)

// regexFrame is a group being read: its estimated compiled size and its last item.
type regexFrame struct {
	size     int
	last     regexItem
	lastSize int
}

// pcreDifference says why NGINX's PCRE2 would reject, or read differently, a
// regular expression that compiles as Go (RE2) syntax; nil when both read it
// the same way. NGINX compiles location and map regexes in 8-bit mode, not
// UTF mode, and turns named groups into variables. Refused:
//   - named groups: (?P<n>…) and (?<n>…) would replace NGINX's (or
//     Gatewall's) variables of that name, or make NGINX reject a duplicate;
//   - \x escapes above 0x7f (RE2 matches the UTF-8 character, PCRE2 one
//     byte; PCRE2 rejects \x{100} and above), \p and \P classes (Unicode in
//     RE2, bytes in PCRE2), \v (a vertical tab in RE2, any vertical space in
//     PCRE2);
//   - \1 to \9 (octal in RE2, back-references in PCRE2; \777 is rejected);
//     octal escapes must start with \0;
//   - \Q…\E (an unterminated one would swallow what Gatewall appends);
//   - a quantifier on an anchor or word boundary (^*, \b+) and zero
//     repetitions ({0}), which PCRE2 rejects or matches differently;
//   - a range starting at a class ([\d-z]) and POSIX collating elements
//     ([[.a.]]), which PCRE2 rejects; a brace that is not a quantifier;
//   - regexes too large or nested too deep for PCRE2.
//
// Differences that remain, for input RE2 and PCRE2 read alike but match
// differently: '$' also matches before a final newline in PCRE2, \s also
// matches a vertical tab, and '.', negated classes and (?i) work on bytes
// rather than UTF-8 characters for non-ASCII input. Gatewall accepts these
// because refusing '$' or \s would refuse most real regexes.
//
// It must only be given regexes that Go compiles.
func pcreDifference(re string) error {
	frames := []regexFrame{{}}
	add := func(kind regexItem, size int) {
		f := &frames[len(frames)-1]
		f.size += size
		f.last, f.lastSize = kind, size
	}
	for i := 0; i < len(re); {
		switch re[i] {
		case '\\':
			n, kind, err := regexEscape(re[i:])
			if err != nil {
				return err
			}
			add(kind, pcreChar)
			i += n
		case '[':
			n, err := regexClass(re[i:])
			if err != nil {
				return err
			}
			add(itemAtom, pcreClass)
			i += n
		case '(':
			n, opens, err := regexGroup(re[i:])
			if err != nil {
				return err
			}
			if !opens {
				frames[len(frames)-1].last = itemNone
			} else if frames = append(frames, regexFrame{}); len(frames) > maxRegexNesting+1 {
				return fmt.Errorf("groups are nested more than %d deep, too deep for NGINX's PCRE2", maxRegexNesting)
			}
			i += n
		case ')':
			if len(frames) == 1 {
				return errors.New("unbalanced ')'")
			}
			inner := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			add(itemGroup, inner.size+pcreGroup)
			i++
		case '|':
			f := &frames[len(frames)-1]
			f.size += pcreAlt
			f.last = itemNone
			i++
		case '^', '$':
			add(itemAnchor, pcreChar)
			i++
		case '*', '+', '?', '{':
			n, copies, ok := regexQuantifier(re[i:])
			if !ok {
				return errors.New("braces are only allowed as quantifiers like {2} or {1,3}; escape a literal brace as \\{")
			}
			if err := quantify(&frames[len(frames)-1], re[i:i+n], copies); err != nil {
				return err
			}
			i += n
		default:
			add(itemAtom, pcreChar)
			i++
		}
		if frames[len(frames)-1].size > maxRegexCode {
			return errors.New("it is too large for NGINX's PCRE2 (too many repetitions of groups)")
		}
	}
	total := 0
	for _, f := range frames {
		total += f.size
	}
	if total > maxRegexCode {
		return errors.New("it is too large for NGINX's PCRE2 (too many repetitions of groups)")
	}
	return nil
}

// quantify applies a quantifier to a frame's last item.
func quantify(f *regexFrame, q string, copies int) error {
	switch {
	case copies == 0:
		return fmt.Errorf("quantifier %q repeats nothing; remove it and what it repeats", q)
	case f.last == itemAnchor:
		return fmt.Errorf("quantifier %q follows an anchor or word boundary, which NGINX's PCRE2 cannot repeat", q)
	case f.last == itemNone || f.last == itemQuantified:
		return fmt.Errorf("quantifier %q has nothing to repeat", q)
	}
	size := f.lastSize + pcreQuant
	if f.last == itemGroup {
		size = copies * (f.lastSize + pcreCopy)
	}
	f.size += size - f.lastSize
	f.last, f.lastSize = itemQuantified, size
	return nil
}

// regexEscape reads the escape at the start of s (s[0] is '\').
func regexEscape(s string) (int, regexItem, error) {
	if len(s) < 2 {
		return 0, itemNone, errors.New("trailing backslash")
	}
	switch c := s[1]; {
	case c == 'x':
		digits, n := "", 4
		if strings.HasPrefix(s[2:], "{") {
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return 0, itemNone, errors.New(`unterminated \x{`)
			}
			digits, n = s[3:end], end+1
		} else if len(s) >= 4 {
			digits = s[2:4]
		}
		if v, err := strconv.ParseUint(digits, 16, 32); err != nil || v > 0x7f {
			return 0, itemNone, fmt.Errorf(`escape %q: NGINX's PCRE2 matches bytes, not UTF-8 characters; only \x00 to \x7f mean the same to both`, s[:min(n, len(s))])
		}
		return n, itemAtom, nil
	case c == '0':
		n := 2
		for n < 4 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			n++
		}
		return n, itemAtom, nil
	case c >= '1' && c <= '9':
		n := 2
		for n < 4 && n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return 0, itemNone, fmt.Errorf(`escape %q: NGINX's PCRE2 reads \1 to \9 as back-references; write octal escapes with a leading zero (\012), or \xHH`, s[:n])
	case c == 'p' || c == 'P':
		return 0, itemNone, fmt.Errorf(`escape %q: Unicode classes match single bytes in NGINX's PCRE2, not UTF-8 characters`, s[:2])
	case c == 'v':
		return 0, itemNone, errors.New(`escape "\v" is a vertical tab in RE2 but any vertical space in NGINX's PCRE2; write \x0b`)
	case c == 'o':
		return 0, itemNone, errors.New(`escape "\o" is not supported; write \0NN or \xHH`)
	case c == 'Q':
		return 0, itemNone, errors.New(`\Q...\E quoting is not supported; escape each character instead`)
	case c == 'b' || c == 'B' || c == 'A' || c == 'z':
		return 2, itemAnchor, nil
	}
	return 2, itemAtom, nil
}

// regexClass reads the character class at the start of s (s[0] is '[').
func regexClass(s string) (int, error) {
	i := 1
	if i < len(s) && s[i] == '^' {
		i++
	}
	// afterClass: the previous element was a class (\d, [:alpha:]), which
	// cannot start a range in PCRE2.
	first, afterClass := true, false
	for i < len(s) {
		c := s[i]
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == ']' && !first:
			return i + 1, nil
		case c == '[' && (next == '.' || next == '='):
			return 0, fmt.Errorf("%q: NGINX's PCRE2 does not support POSIX collating elements; escape '[' as \\[", s[i:i+2])
		case c == '[' && next == ':' && strings.Contains(s[i+2:], ":]"):
			i += strings.Index(s[i+2:], ":]") + 4
			first, afterClass = false, true
			continue
		case c == '\\':
			n, _, err := regexEscape(s[i:])
			if err != nil {
				return 0, err
			}
			i += n
			first, afterClass = false, strings.IndexByte("dDsSwW", next) >= 0
			continue
		case c == '-' && afterClass && next != ']':
			return 0, errors.New(`a range in a character class cannot start at a class like \d or [:alpha:] in NGINX's PCRE2; put '-' last or escape it as \-`)
		}
		first, afterClass = false, false
		i++
	}
	return 0, errors.New("missing ]")
}

// regexGroup reads the opening of a group at the start of s; opens is false
// for a flag group such as (?i), which opens none.
func regexGroup(s string) (n int, opens bool, err error) {
	switch {
	case !strings.HasPrefix(s, "(?"):
		return 1, true, nil
	case strings.HasPrefix(s, "(?P"), strings.HasPrefix(s, "(?<"), strings.HasPrefix(s, "(?'"):
		return 0, false, errors.New("named groups are not allowed: NGINX makes them variables, which could replace its own")
	}
	for i := 2; i < len(s); i++ {
		switch s[i] {
		case ')':
			return i + 1, false, nil
		case ':':
			return i + 1, true, nil
		}
	}
	return 0, false, errors.New("unterminated group")
}

// braceQuantifierRE is a {n}, {n,} or {n,m} quantifier, as RE2 reads one.
var braceQuantifierRE = regexp.MustCompile(`^\{([0-9]+)(,([0-9]*))?\}`)

// regexQuantifier reads the quantifier at the start of s, with its lazy
// mark; copies is how many times PCRE2 copies a repeated group (0 for {0}).
// ok is false for a brace that is not a quantifier (RE2 reads it literally).
func regexQuantifier(s string) (n, copies int, ok bool) {
	switch s[0] {
	case '*', '?':
		n, copies = 1, 1
	case '+':
		n, copies = 1, 2
	default:
		m := braceQuantifierRE.FindStringSubmatch(s)
		if m == nil {
			return 0, 0, false
		}
		low, _ := strconv.Atoi(m[1])
		high, _ := strconv.Atoi(m[3])
		switch {
		case m[2] == "":
			copies = low
		case m[3] == "":
			copies = low + 1
		default:
			copies = high
		}
		n = len(m[0])
	}
	if n < len(s) && s[n] == '?' {
		n++
	}
	return n, copies, true
}
