package config

import (
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// Quote returns s as an NGINX double-quoted string: it is syntax.Quote, the
// one quoting function, under the name the renderer and policies use.
func Quote(s string) string { return syntax.Quote(s) }

// quoteHeaderValue writes a user's header value where NGINX interpolates
// variables (a *_set_header, add_header or map value): allow-listed
// variables as variables, any other '$' as a literal (syntax.HeaderValue),
// then quoted.
func quoteHeaderValue(v string) string { return Quote(syntax.HeaderValue(v)) }

// writer writes NGINX configuration text with indentation, and records
// in keys (when set) what it writes into NGINX's hash tables (hashkeys.go).
type writer struct {
	b     strings.Builder
	depth int
	keys  *hashKeys
}

// line writes one directive: words joined by spaces, then ';'.
func (w *writer) line(words ...string) {
	w.keys.line(words)
	w.indent()
	w.b.WriteString(strings.Join(words, " "))
	w.b.WriteString(";\n")
}

// open starts a block: words, then '{'.
func (w *writer) open(words ...string) {
	w.keys.openBlock(words)
	w.indent()
	w.b.WriteString(strings.Join(words, " "))
	w.b.WriteString(" {\n")
	w.depth++
}

// close ends the innermost block.
func (w *writer) close() {
	w.keys.closeBlock()
	w.depth--
	w.indent()
	w.b.WriteString("}\n")
}

// luaBlock writes a *_by_lua_block directive holding code on one line.
// code is Gatewall's own (lua.go): never user data.
func (w *writer) luaBlock(directive, code string) {
	w.indent()
	w.b.WriteString(directive + " { " + code + " }\n")
}

// comment writes a comment line (no user data: comments end at newlines only).
func (w *writer) comment(text string) {
	w.indent()
	w.b.WriteString("# ")
	w.b.WriteString(strings.ReplaceAll(text, "\n", " "))
	w.b.WriteByte('\n')
}

func (w *writer) blank() { w.b.WriteByte('\n') }

func (w *writer) indent() {
	for i := 0; i < w.depth; i++ {
		w.b.WriteString("    ")
	}
}

func (w *writer) bytes() []byte { return []byte(w.b.String()) }

// writeAll writes the text of other writers in order.
func (w *writer) writeAll(others ...*writer) {
	for _, o := range others {
		w.b.WriteString(o.b.String())
	}
}
