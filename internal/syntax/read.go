package syntax

import (
	"fmt"
	"strconv"
)

// Read reads configuration text written by someone else (a snippet) into
// its directives, token by token as NGINX 1.22's configuration parser
// (ngx_conf_read_token) reads a file, so that what Gatewall checks is
// what NGINX will run.
//
// It reads a strict subset of what NGINX reads: where NGINX would read
// the text otherwise than a person does, Read refuses it instead, and
// says where:
//
//   - a '}' that closes a block the text did not open (in an included
//     file NGINX refuses it; pasted into a server it would close the
//     server), a block left open, a directive left without its ';';
//   - raw control characters other than tab, CR and LF (NGINX keeps them
//     in words, where C strings end at a NUL);
//   - a backslash outside quotes (NGINX takes the next character into the
//     word, a space or ';' included), a quote, '#', '{' or '}' inside a
//     word (NGINX keeps them as characters of the word: "deny all}" is a
//     directive "deny" with the argument "all}"), except '{' and '}' of a
//     ${name} variable;
//   - a word longer than MaxToken, blocks nested deeper than MaxDepth.
//
// Inside quotes NGINX's own rules apply: \" \' \\ \n \t \r are escapes,
// any other backslash stays with its character, and a closing quote must
// be followed by a space, ';', '{' or ')'.
func Read(text string) ([]Directive, error) {
	r := &reader{text: text, line: 1}
	ds, closed, err := r.block(0)
	if err != nil {
		return nil, err
	}
	if closed {
		return nil, r.errorf(r.tokenLine, "unexpected \"}\": it closes a block the text did not open")
	}
	return ds, nil
}

// MaxDepth is how deeply Read lets blocks nest.
const MaxDepth = 8

// Directive is a directive as NGINX reads it: its name and arguments after
// NGINX removes quotes and escapes, and its block. Line is where it starts
// in the text read (1 for the first line).
type Directive struct {
	Name string
	Args []string
	// Block is nil for a simple directive, non-nil (maybe empty) for a block.
	Block []Directive
	Line  int
}

// reader is one Read in progress.
type reader struct {
	text string
	pos  int
	line int
	// tokenLine is the line of the token or directive being read.
	tokenLine int
}

func (r *reader) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// block reads directives up to a '}' (closed) or the end of the text.
func (r *reader) block(depth int) (ds []Directive, closed bool, err error) {
	for {
		words, line, end, err := r.statement()
		if err != nil {
			return nil, false, err
		}
		switch end {
		case 0:
			if len(words) > 0 {
				return nil, false, r.errorf(line, "directive %s has no \";\" at its end", quoteName(words[0]))
			}
			return ds, false, nil
		case '}':
			if len(words) > 0 {
				return nil, false, r.errorf(line, "directive %s has no \";\" before \"}\"", quoteName(words[0]))
			}
			return ds, true, nil
		}
		if len(words) == 0 {
			return nil, false, r.errorf(r.tokenLine, "unexpected %q with no directive before it", string(end))
		}
		d := Directive{Name: words[0], Line: line}
		if len(words) > 1 {
			d.Args = words[1:]
		}
		if end == '{' {
			if depth+1 >= MaxDepth {
				return nil, false, r.errorf(line, "blocks nest deeper than %d", MaxDepth)
			}
			inner, closed, err := r.block(depth + 1)
			if err != nil {
				return nil, false, err
			}
			if !closed {
				return nil, false, r.errorf(line, "the block of %s is not closed with \"}\"", quoteName(d.Name))
			}
			if inner == nil {
				inner = []Directive{}
			}
			d.Block = inner
		}
		ds = append(ds, d)
	}
}

// statement reads words up to ';', '{', '}' or the end of the text (end 0),
// and the line of its first word.
func (r *reader) statement() (words []string, line int, end byte, err error) {
	for {
		if err := r.skipSpace(); err != nil {
			return nil, 0, 0, err
		}
		if r.pos >= len(r.text) {
			return words, line, 0, nil
		}
		r.tokenLine = r.line
		if len(words) == 0 {
			line = r.line
		}
		c := r.text[r.pos]
		switch c {
		case ';', '{', '}':
			r.pos++
			return words, line, c, nil
		case '#':
			for r.pos < len(r.text) && r.text[r.pos] != '\n' {
				if err := r.control(r.text[r.pos]); err != nil {
					return nil, 0, 0, err
				}
				r.pos++
			}
			continue
		}
		var w string
		if c == '"' || c == '\'' {
			w, err = r.quoted(c)
		} else {
			w, err = r.word()
		}
		if err != nil {
			return nil, 0, 0, err
		}
		words = append(words, w)
	}
}

// skipSpace skips what NGINX takes for spaces: ' ', tab, CR and LF.
func (r *reader) skipSpace() error {
	for r.pos < len(r.text) {
		switch r.text[r.pos] {
		case '\n':
			r.line++
		case ' ', '\t', '\r':
		default:
			return nil
		}
		r.pos++
	}
	return nil
}

// control refuses a raw control character (tab, CR and LF are spaces).
func (r *reader) control(c byte) error {
	if (c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f {
		return r.errorf(r.line, "control character %q: write it as an escape inside quotes (\\t, \\n, \\r) or leave it out", string(c))
	}
	return nil
}

// word reads a word outside quotes: it ends at a space, ';' or '{' (unless
// '{' follows '$', as in ${name}).
func (r *reader) word() (string, error) {
	start := r.pos
	for r.pos < len(r.text) {
		c := r.text[r.pos]
		if err := r.control(c); err != nil {
			return "", err
		}
		switch c {
		case ' ', '\t', '\r', '\n', ';':
			return r.token(start, r.pos)
		case '{':
			if r.pos > start && r.text[r.pos-1] == '$' {
				if err := r.braced(); err != nil {
					return "", err
				}
				continue
			}
			return r.token(start, r.pos)
		case '}':
			return "", r.errorf(r.line, "\"}\" inside the word %s: NGINX would keep it in the word; put a space or ';' before it", quoteWord(r.text[start:r.pos]))
		case '"', '\'':
			return "", r.errorf(r.line, "a quote inside the word %s: NGINX would keep it as a character; quote the whole word", quoteWord(r.text[start:r.pos]))
		case '#':
			return "", r.errorf(r.line, "\"#\" inside the word %s: NGINX would keep it in the word, not start a comment; put a space before it", quoteWord(r.text[start:r.pos]))
		case '\\':
			return "", r.errorf(r.line, "a backslash outside quotes (in %s): NGINX would take the next character into the word; quote the word", quoteWord(r.text[start:r.pos]))
		}
		r.pos++
	}
	return r.token(start, r.pos)
}

// braced reads the {name} of a ${name} variable in a word: NGINX reads
// the braces as characters of the word, which they are.
func (r *reader) braced() error {
	r.pos++ // '{'
	start := r.pos
	for r.pos < len(r.text) && isNameChar(r.text[r.pos]) {
		r.pos++
	}
	if r.pos == start || r.pos >= len(r.text) || r.text[r.pos] != '}' {
		return r.errorf(r.line, "\"${\" must be followed by a variable name and \"}\"")
	}
	r.pos++
	return nil
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// token is text[start:end] as a word, checked for length.
func (r *reader) token(start, end int) (string, error) {
	if n := end - start; n > MaxToken {
		return "", r.errorf(r.line, "a word of %d bytes, longer than the %d NGINX reads", n, MaxToken)
	}
	return r.text[start:end], nil
}

// quoted reads a quoted string as NGINX does and returns its value.
func (r *reader) quoted(q byte) (string, error) {
	line := r.line
	r.pos++
	start := r.pos
	for {
		if r.pos >= len(r.text) {
			return "", r.errorf(line, "a quoted string is not closed with %s", string(q))
		}
		c := r.text[r.pos]
		if err := r.control(c); err != nil {
			return "", err
		}
		if c == '\n' {
			r.line++
		}
		if c == '\\' && r.pos+1 < len(r.text) {
			r.pos++
			if err := r.control(r.text[r.pos]); err != nil {
				return "", err
			}
			if r.text[r.pos] == '\n' {
				r.line++
			}
			r.pos++
			continue
		}
		if c == q {
			break
		}
		r.pos++
	}
	raw := r.text[start:r.pos]
	if len(raw) > MaxToken {
		return "", r.errorf(line, "a quoted string of %d bytes, longer than the %d NGINX reads", len(raw), MaxToken)
	}
	r.pos++
	if r.pos < len(r.text) {
		switch c := r.text[r.pos]; c {
		case ' ', '\t', '\r', '\n', ';', '{', ')':
		default:
			return "", r.errorf(r.line, "%q right after a quoted string: NGINX wants a space, \";\" or \"{\" there", string(c))
		}
	}
	return unescape(raw), nil
}

// unescape applies the escapes NGINX applies to every word: \" \' \\ lose
// their backslash, \t \r \n are tab, CR and LF; any other backslash stays.
func unescape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			var repl byte
			switch s[i+1] {
			case '"', '\'', '\\':
				repl = s[i+1]
			case 't':
				repl = '\t'
			case 'r':
				repl = '\r'
			case 'n':
				repl = '\n'
			}
			if repl != 0 {
				if b == nil {
					b = append(make([]byte, 0, len(s)), s[:i]...)
				}
				b = append(b, repl)
				i++
				continue
			}
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// maxShown is how much of a word error messages show.
const maxShown = 40

// quoteWord shows a word in an error message: Go-quoted, cut to maxShown bytes.
func quoteWord(s string) string {
	if len(s) > maxShown {
		return strconv.Quote(s[:maxShown]) + "..."
	}
	return strconv.Quote(s)
}

func quoteName(s string) string { return quoteWord(s) }

// Format writes directives back as configuration text, one a line and
// blocks indented, each word as Word writes it: Read gives the same
// directives back (FuzzRead checks it).
func Format(ds []Directive) string {
	var b []byte
	b = format(b, ds, 0)
	return string(b)
}

func format(b []byte, ds []Directive, depth int) []byte {
	for _, d := range ds {
		for i := 0; i < depth; i++ {
			b = append(b, "    "...)
		}
		b = append(b, Word(d.Name)...)
		for _, a := range d.Args {
			b = append(b, ' ')
			b = append(b, Word(a)...)
		}
		if d.Block == nil {
			b = append(b, ";\n"...)
			continue
		}
		b = append(b, " {\n"...)
		b = format(b, d.Block, depth+1)
		for i := 0; i < depth; i++ {
			b = append(b, "    "...)
		}
		b = append(b, "}\n"...)
	}
	return b
}

// Word writes a value as one NGINX word: as it is when NGINX reads it
// back unchanged (letters, digits and a few punctuation characters, a
// '$' not followed by '{'), else with Quote.
func Word(s string) string {
	if bare(s) {
		return s
	}
	return Quote(s)
}

func bare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isNameChar(c):
		case c == '$':
			if i+1 < len(s) && s[i+1] == '{' {
				return false
			}
		default:
			switch c {
			case '.', '/', ':', '=', '*', '@', '+', ',', '-', '%', '^', '~', '!', '|', '[', ']', '?', '&':
			default:
				return false
			}
		}
	}
	return true
}
