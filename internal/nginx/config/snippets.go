package config

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/snippets"
	"github.com/gatewall/gatewall/internal/syntax"
)

// Snippets are written into include files of their own, one per object
// and context, with the words package snippets checked (never the text as
// the user wrote it) and each object's zones under names of their own:
// a SnippetsPolicy's through Includes (package policy), a SnippetsFilter's
// here, in the locations of the rules that name it, its http snippet at
// http level once. Each file's origin is its object, so that NGINX's
// errors about it name the object.

// SnippetIncludePath is the path of the include file of an object's
// snippet for one context.
func SnippetIncludePath(kind string, obj types.NamespacedName, ctx v1alpha1.NginxContext) string {
	return nameOf(kindSnippetFile, strings.ToLower(kind), obj.Namespace, obj.Name, string(ctx))
}

// SnippetZone is the name of a zone an object's snippets declare: the
// zones of two objects never share a name, whatever their snippets call
// them.
func SnippetZone(kind string, obj types.NamespacedName, zone string) string {
	return nameOf(kindSnippetZone, strings.ToLower(kind), obj.Namespace, obj.Name, zone)
}

// SnippetDirectives are the directives of an object's snippet for one
// context, as they are written.
func SnippetDirectives(kind string, obj types.NamespacedName, c *snippets.Checked, ctx v1alpha1.NginxContext) []Directive {
	rename := func(zone string) string { return SnippetZone(kind, obj, zone) }
	return directivesOf(c.Render(ctx, rename))
}

// directivesOf converts directives read by package syntax, each word
// written as syntax.Word writes it.
func directivesOf(ds []syntax.Directive) []Directive {
	out := make([]Directive, 0, len(ds))
	for _, d := range ds {
		nd := Directive{Name: syntax.Word(d.Name)}
		for _, a := range d.Args {
			nd.Args = append(nd.Args, syntax.Word(a))
		}
		if d.Block != nil {
			nd.Block = directivesOf(d.Block)
			if nd.Block == nil {
				nd.Block = []Directive{}
			}
		}
		out = append(out, nd)
	}
	return out
}

// filterSnippets returns the include paths of a rule's SnippetsFilters'
// location snippets, writing each filter's files when a location first
// needs them: its location snippet, and its http snippet (the zones it
// declares) at http level.
func (b *builder) filterSnippets(rule *graph.Rule) []string {
	var paths []string
	for _, fs := range rule.Filters.Snippets {
		path, done := b.filterFiles[fs.Filter]
		if !done {
			path = b.writeFilterSnippets(fs)
			if b.filterFiles == nil {
				b.filterFiles = map[graph.ObjectRef]string{}
			}
			b.filterFiles[fs.Filter] = path
		}
		if path != "" {
			paths = append(paths, path)
		}
	}
	return paths
}

// writeFilterSnippets writes a filter's files and returns the path of its
// location file ("" when it has no location snippet).
func (b *builder) writeFilterSnippets(fs *graph.FilterSnippets) string {
	origin := graph.KindSnippetsFilter + " " + fs.Filter.Key.String()
	if fs.Checked.Has(v1alpha1.NginxContextHTTP) {
		path := SnippetIncludePath(graph.KindSnippetsFilter, fs.Filter.Key, v1alpha1.NginxContextHTTP)
		f := includeFile(path, SnippetDirectives(graph.KindSnippetsFilter, fs.Filter.Key, fs.Checked, v1alpha1.NginxContextHTTP))
		b.cfg.Includes = append(b.cfg.Includes, f)
		b.cfg.HTTPIncludes = insertSorted(b.cfg.HTTPIncludes, path)
		b.origin(path, origin)
	}
	if !fs.Checked.Has(v1alpha1.NginxContextHTTPServerLocation) {
		return ""
	}
	path := SnippetIncludePath(graph.KindSnippetsFilter, fs.Filter.Key, v1alpha1.NginxContextHTTPServerLocation)
	b.cfg.Includes = append(b.cfg.Includes,
		includeFile(path, SnippetDirectives(graph.KindSnippetsFilter, fs.Filter.Key, fs.Checked, v1alpha1.NginxContextHTTPServerLocation)))
	b.origin(path, origin)
	return path
}

// insertSorted inserts s into a sorted list.
func insertSorted(list []string, s string) []string {
	i := 0
	for i < len(list) && list[i] < s {
		i++
	}
	return append(list[:i], append([]string{s}, list[i:]...)...)
}
