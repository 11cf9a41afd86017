package snippets

import (
	"fmt"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/syntax"
)

// Rendered is what CheckRendered found in a rendered snippet file.
type Rendered struct {
	// Declared and Used are the zones it declares and uses, by their
	// rendered names.
	Declared, Used []string
}

// CheckRendered holds a snippet file as the renderer wrote it to the
// allow-list of its context, as Check does a user's snippet (the
// allow-list of a Gateway's owner: the wider one), with zone names
// checked by zoneName instead of a user's rule: the renderer names zones
// itself. A test oracle (confcheck) calls it on every rendered
// configuration, so that what reaches NGINX is checked where it stands.
// Whether a zone used is declared is the caller's to check, across files.
func CheckRendered(ctx v1alpha1.NginxContext, text string, zoneName func(string) error) (*Rendered, error) {
	p, ok := contextPlace[ctx]
	if !ok {
		return nil, fmt.Errorf("a snippet file in context %q, where none is written", ctx)
	}
	ds, err := syntax.Read(text)
	if err != nil {
		return nil, err
	}
	w := &walk{scope: GatewayScope, zoneName: zoneName}
	if err := w.block(ds, p); err != nil {
		return nil, err
	}
	r := &Rendered{Used: w.uses}
	for _, z := range w.zones {
		r.Declared = append(r.Declared, z.Name)
	}
	return r, nil
}
