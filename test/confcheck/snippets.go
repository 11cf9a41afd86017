package confcheck

import (
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/snippets"
)

// snippetsDir holds the include files of snippets (config.SnippetIncludePath).
const snippetsDir = config.IncludesDir + "snippets/"

// snippetZonePrefix starts the names the renderer gives snippets' zones
// (config.SnippetZone).
const snippetZonePrefix = "sn_"

// snippetFile says whether a file is a snippet's.
func snippetFile(path string) bool { return strings.HasPrefix(path, snippetsDir) }

// snippetContexts are the contexts of snippet files, by where the checker
// reads them.
var snippetContexts = map[string]v1alpha1.NginxContext{
	ctxHTTP:     v1alpha1.NginxContextHTTP,
	ctxServer:   v1alpha1.NginxContextHTTPServer,
	ctxLocation: v1alpha1.NginxContextHTTPServerLocation,
}

// snippet checks a snippet file where it is included: with the allow-list
// of snippets of that context (the same package snippets holds users'
// snippets to), its zones under names the renderer gave them. A file is
// included in many locations but checked once; its zones are declared
// once in the whole configuration.
func (c *checker) snippet(at *Directive, path, ctx string) {
	c.reached[path] = true
	data, ok := c.files[path]
	if !ok {
		c.fail(at, "refers to %s, which is not rendered", path)
		return
	}
	sctx, ok := snippetContexts[ctx]
	if !ok {
		c.fail(at, "snippet file %s in %s context", path, ctx)
		return
	}
	key := path + "\x00" + ctx
	if c.snippets[key] {
		return
	}
	c.snippets[key] = true
	r, err := snippets.CheckRendered(sctx, string(data), renderedZone)
	if err != nil {
		c.fail(at, "snippet file %s: %v", path, err)
		return
	}
	for _, z := range r.Declared {
		if c.zones[z] {
			c.fail(at, "zone %q is declared twice", z)
		}
		c.zones[z] = true
	}
	for _, z := range r.Used {
		c.use(at, "zone", z)
	}
}

// renderedZone checks a zone's name as the renderer gives it.
func renderedZone(name string) error {
	if !strings.HasPrefix(name, snippetZonePrefix) {
		return fmt.Errorf("zone %q is not a name Gatewall gives snippets' zones", name)
	}
	return nil
}
