package config

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/graph"
)

// Includes are the files policies add to a Gateway's configuration: HTTP
// files are included at http level, Servers files in every HTTP server of
// the Gateway, Locations files in every location that serves a route, and
// Routes files in every location that serves the route (internal dispatch
// locations included).
type Includes struct {
	HTTP      []File
	Servers   []File
	Locations []File
	Routes    map[graph.ObjectRef][]File
	// Origins are, by path, the objects a file is written from ("Kind
	// ns/name"): NGINX's errors name files, users need the objects.
	Origins map[string][]string
	// Modules are load_module paths for nginx.conf.
	Modules []string
	// Extra are more files the configuration refers to (WAF bundles).
	Extra []File
	// Upstreams are the settings of the upstreams of each Service.
	Upstreams map[types.NamespacedName]*UpstreamSettings
}

// AddHTTP adds an http-level include file of directives (nothing when none).
func (inc *Includes) AddHTTP(path string, directives []Directive) {
	if len(directives) > 0 {
		inc.HTTP = append(inc.HTTP, includeFile(path, directives))
	}
}

// AddServer adds an include file of directives to every HTTP server.
func (inc *Includes) AddServer(path string, directives []Directive) {
	if len(directives) > 0 {
		inc.Servers = append(inc.Servers, includeFile(path, directives))
	}
}

// AddLocation adds an include file of directives to every location that
// serves a route.
func (inc *Includes) AddLocation(path string, directives []Directive) {
	if len(directives) > 0 {
		inc.Locations = append(inc.Locations, includeFile(path, directives))
	}
}

// AddOrigin records an object a file is written from.
func (inc *Includes) AddOrigin(path, origin string) {
	if inc.Origins == nil {
		inc.Origins = map[string][]string{}
	}
	inc.Origins[path] = append(inc.Origins[path], origin)
}

// AddRoute adds an include file of directives to a route's locations.
func (inc *Includes) AddRoute(r graph.ObjectRef, path string, directives []Directive) {
	if len(directives) == 0 {
		return
	}
	if inc.Routes == nil {
		inc.Routes = map[graph.ObjectRef][]File{}
	}
	inc.Routes[r] = append(inc.Routes[r], includeFile(path, directives))
}

// includeFile writes directives one a line (blocks indented) after the
// header comment.
func includeFile(path string, directives []Directive) File {
	w := &writer{}
	w.comment(header)
	for _, dir := range directives {
		writeDirective(w, dir)
	}
	return File{Path: path, Data: w.bytes(), Mode: 0o644}
}

// RouteIncludePath is the path of a route's include file for one policy
// kind: in the kind's directory, a name generated (names.go) from the
// route's kind, namespace and name; each kind's files have a directory of
// their own, beside its http-level file (IncludesDir + kind + ".conf").
func RouteIncludePath(kind string, r graph.ObjectRef) string {
	k := nameKind{prefix: IncludesDir + kind + "/", suffix: ".conf", readable: maxFileName - len(".conf")}
	return nameOf(k, strings.ToLower(r.Kind), r.Key.Namespace, r.Key.Name)
}

// register records the include files in the configuration.
func (b *builder) register(inc Includes) {
	for _, f := range inc.HTTP {
		b.cfg.HTTPIncludes = append(b.cfg.HTTPIncludes, f.Path)
		b.cfg.Includes = append(b.cfg.Includes, f)
	}
	for _, files := range inc.Routes {
		b.cfg.Includes = append(b.cfg.Includes, files...)
	}
	for _, f := range inc.Servers {
		b.serverIncludes = append(b.serverIncludes, f.Path)
		b.cfg.Includes = append(b.cfg.Includes, f)
	}
	for _, f := range inc.Locations {
		b.locationIncludes = append(b.locationIncludes, f.Path)
		b.cfg.Includes = append(b.cfg.Includes, f)
	}
	sort.Strings(b.serverIncludes)
	sort.Strings(b.locationIncludes)
	for path, objs := range inc.Origins {
		b.origin(path, objs...)
	}
	sort.Strings(b.cfg.HTTPIncludes)
	b.routeIncludes = inc.Routes
	b.cfg.Main.Modules = append(b.cfg.Main.Modules, inc.Modules...)
	sort.Strings(b.cfg.Main.Modules)
	b.cfg.Includes = append(b.cfg.Includes, inc.Extra...)
	b.upstreamSettings = inc.Upstreams
}

// includesOf returns the include paths of the locations of an entry: its
// route's policies', the Gateway's snippets', its rule's filters'.
func (b *builder) includesOf(e entry) []string {
	files := b.routeIncludes[graph.ObjectRef{Kind: e.route.Kind, Key: e.route.Key}]
	paths := make([]string, 0, len(files)+len(b.locationIncludes))
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	paths = append(paths, b.locationIncludes...)
	return append(paths, b.filterSnippets(e.rule)...)
}
