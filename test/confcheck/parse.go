package confcheck

import (
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// Directive is one parsed directive, with its block when it has one.
type Directive struct {
	Name string
	// NameQuoted says the name was quoted, as map keys may be.
	NameQuoted bool
	Args       []Arg
	// Block is nil for a simple directive.
	Block []*Directive
	File  string
	Line  int
}

// Arg is one argument as NGINX reads it.
type Arg struct {
	// Value is the argument after NGINX removes quotes and the escapes it
	// knows (\" \' \\ \t \r \n).
	Value string
	// Quoted says the argument was written as a quoted string.
	Quoted bool
}

func (d *Directive) String() string {
	return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Name)
}

// values returns the arguments' values.
func (d *Directive) values() []string {
	out := make([]string, len(d.Args))
	for i, a := range d.Args {
		out[i] = a.Value
	}
	return out
}

// parser reads one file as ngx_conf_read_token does.
type parser struct {
	file string
	data string
	pos  int
	line int
}

// Parse parses one configuration file into its top-level directives.
func Parse(file string, data []byte) ([]*Directive, error) {
	p := &parser{file: file, data: string(data), line: 1}
	ds, end, err := p.block()
	if err != nil {
		return nil, err
	}
	if end == '}' {
		return nil, p.errorf("unexpected \"}\"")
	}
	return ds, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, p.line, fmt.Sprintf(format, args...))
}

// block reads directives until '}' or the end of the file, which it returns
// (0 for the end).
func (p *parser) block() ([]*Directive, byte, error) {
	var out []*Directive
	for {
		words, line, end, err := p.statement()
		if err != nil {
			return nil, 0, err
		}
		switch end {
		case 0, '}':
			if len(words) > 0 {
				return nil, 0, p.errorf("unexpected end of directive %q", words[0].Value)
			}
			return out, end, nil
		}
		if len(words) == 0 {
			return nil, 0, p.errorf("unexpected %q", end)
		}
		d := &Directive{Name: words[0].Value, NameQuoted: words[0].Quoted, Args: words[1:], File: p.file, Line: line}
		if end == '{' && strings.HasSuffix(d.Name, "_by_lua_block") && len(d.Args) == 0 {
			// The Lua module reads the block as Lua code, up to its
			// closing brace: the code is the directive's one argument.
			code, err := p.luaBlock()
			if err != nil {
				return nil, 0, err
			}
			d.Args = []Arg{{Value: code}}
			out = append(out, d)
			continue
		}
		if end == '{' {
			block, closing, err := p.block()
			if err != nil {
				return nil, 0, err
			}
			if closing != '}' {
				return nil, 0, p.errorf("unexpected end of file, expecting \"}\" for %q", d.Name)
			}
			d.Block = block
			if d.Block == nil {
				d.Block = []*Directive{}
			}
		}
		out = append(out, d)
	}
}

// luaBlock reads Lua code up to the brace that closes the block, skipping
// braces in Lua's quoted strings, and returns it without the surrounding
// spaces.
func (p *parser) luaBlock() (string, error) {
	start, depth := p.pos, 1
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; c {
		case '"', '\'':
			p.advance()
			for p.pos < len(p.data) && p.data[p.pos] != c {
				if p.data[p.pos] == '\\' {
					p.advance()
				}
				p.advance()
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				code := strings.TrimSpace(p.data[start:p.pos])
				p.advance()
				return code, nil
			}
		}
		p.advance()
	}
	return "", p.errorf("unexpected end of file in a Lua block")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// statement reads words up to ';', '{', '}' or the end of the file, which
// it returns as end (0 for the end of the file).
func (p *parser) statement() (words []Arg, line int, end byte, err error) {
	for {
		for p.pos < len(p.data) && isSpace(p.data[p.pos]) {
			p.advance()
		}
		if p.pos >= len(p.data) {
			return words, line, 0, nil
		}
		if len(words) == 0 {
			line = p.line
		}
		switch c := p.data[p.pos]; c {
		case ';', '{', '}':
			p.advance()
			return words, line, c, nil
		case '#':
			for p.pos < len(p.data) && p.data[p.pos] != '\n' {
				p.advance()
			}
		case '"', '\'':
			w, err := p.quoted(c)
			if err != nil {
				return nil, 0, 0, err
			}
			words = append(words, w)
		default:
			w, err := p.word()
			if err != nil {
				return nil, 0, 0, err
			}
			words = append(words, w)
		}
	}
}

func (p *parser) advance() {
	if p.data[p.pos] == '\n' {
		p.line++
	}
	p.pos++
}

// quoted reads a quoted string; after it NGINX wants a space, ';', '{'
// or ')' (which starts the next word).
func (p *parser) quoted(q byte) (Arg, error) {
	p.advance()
	start := p.pos
	for {
		if p.pos >= len(p.data) {
			return Arg{}, p.errorf("unterminated quoted string")
		}
		c := p.data[p.pos]
		if c == '\\' && p.pos+1 < len(p.data) {
			p.advance()
			p.advance()
			continue
		}
		if c == q {
			break
		}
		p.advance()
	}
	raw := p.data[start:p.pos]
	if len(raw) > syntax.MaxToken {
		return Arg{}, p.errorf("a quoted token of %d bytes, longer than the %d NGINX reads", len(raw), syntax.MaxToken)
	}
	p.advance()
	if p.pos < len(p.data) {
		if c := p.data[p.pos]; !isSpace(c) && c != ';' && c != '{' && c != ')' {
			return Arg{}, p.errorf("unexpected %q after a quoted string", c)
		}
	}
	return Arg{Value: unescape(raw), Quoted: true}, nil
}

// word reads an unquoted word: it ends at a space, ';' or '{' (unless the
// '{' follows '$', as in ${name}); a backslash takes the next character.
func (p *parser) word() (Arg, error) {
	start := p.pos
	variable := false
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '\\' && p.pos+1 < len(p.data) {
			p.advance()
			p.advance()
			variable = false
			continue
		}
		if c == '{' && variable {
			p.advance()
			continue
		}
		if isSpace(c) || c == ';' || c == '{' {
			break
		}
		variable = c == '$'
		p.advance()
	}
	if n := p.pos - start; n > syntax.MaxToken {
		return Arg{}, p.errorf("a token of %d bytes, longer than the %d NGINX reads", n, syntax.MaxToken)
	}
	return Arg{Value: unescape(p.data[start:p.pos])}, nil
}

// unescape applies the escapes NGINX applies to every word.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"', '\'', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
