package validation

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
)

// A regular expression as NGINX's PCRE2 backtracks through it, for the
// backtracking analysis (redos.go). It is parsed here, not with Go's
// regexp/syntax, because that parser simplifies what PCRE2 keeps: it folds
// (a|a) into a and a|ab into ab?, which changes how many ways a string
// can match. Only single items (a character, an escape, a class) are read
// with Go's parser, for the bytes they match. Input has passed
// pcreDifference, so it is well formed.

// byteSet is the set of bytes an item matches (NGINX's PCRE2 matches bytes).
type byteSet [4]uint64

func (b *byteSet) add(lo, hi rune) {
	for c := max(lo, 0); c <= min(hi, 255); c++ {
		b[c/64] |= 1 << (c % 64)
	}
}

func (b byteSet) overlaps(o byteSet) bool {
	return b[0]&o[0] != 0 || b[1]&o[1] != 0 || b[2]&o[2] != 0 || b[3]&o[3] != 0
}

// reKind is what a node of the expression is.
type reKind int

const (
	reBytes  reKind = iota // one byte of a set
	reEmpty                // matches the empty string (anchors too)
	reConcat               // subs in sequence
	reAlt                  // one of subs
	reRepeat               // sub repeated min to max (-1: unbounded) times
)

type reNode struct {
	kind     reKind
	set      byteSet
	subs     []*reNode
	min, max int
}

// reParser reads a PCRE2 expression into nodes; fold and dotall are the
// (?i) and (?s) flags in force.
type reParser struct {
	s            string
	i            int
	fold, dotall bool
}

func parseBacktracking(re string) (*reNode, error) {
	p := &reParser{s: re}
	n, err := p.alternation()
	if err == nil && p.i != len(p.s) {
		err = fmt.Errorf("unbalanced ')' at %d", p.i)
	}
	return n, err
}

func (p *reParser) alternation() (*reNode, error) {
	alt := &reNode{kind: reAlt}
	for {
		seq, err := p.sequence()
		if err != nil {
			return nil, err
		}
		alt.subs = append(alt.subs, seq)
		if p.i >= len(p.s) || p.s[p.i] != '|' {
			break
		}
		p.i++
	}
	if len(alt.subs) == 1 {
		return alt.subs[0], nil
	}
	return alt, nil
}

func (p *reParser) sequence() (*reNode, error) {
	seq := &reNode{kind: reConcat}
	for p.i < len(p.s) && p.s[p.i] != '|' && p.s[p.i] != ')' {
		item, err := p.item()
		if err != nil {
			return nil, err
		}
		if item == nil { // a flag group
			continue
		}
		if item, err = p.quantified(item); err != nil {
			return nil, err
		}
		seq.subs = append(seq.subs, item)
	}
	return seq, nil
}

// item reads one item: a group, a class, an escape, an anchor or a
// character; nil for a flag group such as (?i), which only sets flags.
func (p *reParser) item() (*reNode, error) {
	s := p.s[p.i:]
	switch s[0] {
	case '(':
		n, opens, err := regexGroup(s)
		if err != nil {
			return nil, err
		}
		p.i += n
		if !opens {
			p.setFlags(s[2 : n-1])
			return nil, nil
		}
		fold, dotall := p.fold, p.dotall
		if strings.HasPrefix(s, "(?") {
			p.setFlags(s[2 : n-1])
		}
		sub, err := p.alternation()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("missing ')'")
		}
		p.i++
		p.fold, p.dotall = fold, dotall
		return sub, nil
	case '[':
		n, err := regexClass(s)
		if err != nil {
			return nil, err
		}
		p.i += n
		return p.leaf(s[:n])
	case '\\':
		n, kind, err := regexEscape(s)
		if err != nil {
			return nil, err
		}
		p.i += n
		if kind == itemAnchor {
			return &reNode{kind: reEmpty}, nil
		}
		return p.leaf(s[:n])
	case '^', '$':
		p.i++
		return &reNode{kind: reEmpty}, nil
	case '.':
		p.i++
		n := &reNode{kind: reBytes}
		n.set.add(0, 255)
		if !p.dotall {
			n.set[0] &^= 1 << '\n'
		}
		return n, nil
	}
	p.i++
	return p.leaf(s[:1])
}

// setFlags applies flag letters such as "i", "is" or "i-s".
func (p *reParser) setFlags(flags string) {
	on := true
	for _, c := range flags {
		switch c {
		case '-':
			on = false
		case 'i':
			p.fold = on
		case 's':
			p.dotall = on
		}
	}
}

// leaf is the byte set of a single item: a character or an escaped
// punctuation character directly, others read with Go's parser.
func (p *reParser) leaf(text string) (*reNode, error) {
	if c, ok := literalByte(text); ok {
		n := &reNode{kind: reBytes}
		n.set.add(rune(c), rune(c))
		if p.fold && unicode.IsLetter(rune(c)) {
			n.set.add(unicode.ToUpper(rune(c)), unicode.ToUpper(rune(c)))
			n.set.add(unicode.ToLower(rune(c)), unicode.ToLower(rune(c)))
		}
		return n, nil
	}
	flags := syntax.Perl
	if p.fold {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(text, flags)
	if err != nil {
		return nil, err
	}
	n := &reNode{kind: reBytes}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			n.set.add(r, r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					n.set.add(f, f)
				}
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n.set.add(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		n.set.add(0, 255)
	default:
		return nil, fmt.Errorf("unexpected item %q", text)
	}
	return n, nil
}

// literalByte is the byte a literal item matches: a character, or a
// backslash and a punctuation character.
func literalByte(text string) (byte, bool) {
	switch {
	case len(text) == 1:
		return text[0], true
	case len(text) == 2 && text[0] == '\\' && text[1] < 0x80 && !unicode.IsLetter(rune(text[1])) && !unicode.IsDigit(rune(text[1])):
		return text[1], true
	}
	return 0, false
}

// quantified applies the quantifier after an item, if any (a lazy '?'
// changes the order PCRE2 tries, not the ways it can match).
func (p *reParser) quantified(item *reNode) (*reNode, error) {
	if p.i >= len(p.s) {
		return item, nil
	}
	s := p.s[p.i:]
	q := &reNode{kind: reRepeat, subs: []*reNode{item}}
	switch s[0] {
	case '*':
		q.min, q.max, p.i = 0, -1, p.i+1
	case '+':
		q.min, q.max, p.i = 1, -1, p.i+1
	case '?':
		q.min, q.max, p.i = 0, 1, p.i+1
	case '{':
		m := braceQuantifierRE.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("brace is not a quantifier")
		}
		q.min, _ = strconv.Atoi(m[1])
		q.max = q.min
		switch {
		case m[2] != "" && m[3] == "":
			q.max = -1
		case m[3] != "":
			q.max, _ = strconv.Atoi(m[3])
		}
		p.i += len(m[0])
	default:
		return item, nil
	}
	if p.i < len(p.s) && p.s[p.i] == '?' {
		p.i++
	}
	return q, nil
}
