// Package unreadable handles objects that do not decode into their Go
// types: a string where a number belongs, a number that does not fit its
// field. The API server's schema refuses them, but one that bypassed it (an
// old or loosened CRD, or a manifest given to `gatewall render`) must be
// refused alone, never stop the reading of every other object of its kind:
// it is replaced by a stub holding only what identifies it and what it
// attaches to, marked with the reason (Annotation), which the graph reports
// as not accepted. The manager's client does the replacing in the API
// server's answers (StubConfig); `gatewall render` does it as it reads
// manifests.
package unreadable

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
)

// Annotation marks a stub: its value is why the object does not decode.
// graph.Input.Add records such an object as unreadable.
const Annotation = graph.UnreadableAnnotation

// Reason is why an object does not decode, fit for a status message.
func Reason(err error) string {
	return "it does not decode: " + printable(err.Error())
}

// identityFields are, for the kinds whose refusal a stub carries, the spec
// fields that say whose the object is and what it attaches to: a
// GatewayClass's controller, a Gateway's class, a ListenerSet's Gateway,
// routes' parents, policies' targets (policy.Kinds say theirs). An
// EndpointSlice's stub carries only metadata: its labels name its Service,
// whose routes report it.
var identityFields = map[string][]string{
	"GatewayClass":  {"controllerName"},
	"Gateway":       {"gatewayClassName"},
	"ListenerSet":   {"parentRef"},
	"EndpointSlice": nil,
	// An NginxProxy's stub is its name: it reports itself, and the
	// Gateways whose parameters it is report it.
	"NginxProxy": nil,
}

// Fields are the identity fields a stub of the kind keeps; ok is false for
// kinds that have no stub (what refers to them reports them instead).
func Fields(kind string) (fields []string, ok bool) {
	if k := policy.KindNamed(kind); k != nil {
		return []string{k.TargetsField()}, true
	}
	if routekind.Named(kind) != nil {
		return []string{"parentRefs"}, true
	}
	if graph.ExtensionFilterKindNamed(kind) != nil {
		// A filter's stub is its name: the rules naming it report it.
		return nil, true
	}
	fields, ok = identityFields[kind]
	return fields, ok
}

// Stub decodes, leniently with dec, the identity of the object u:
// metadata (its name, namespace, labels, generation, creationTimestamp and
// the keepMeta fields) and its kind's identity fields (Fields; none for a
// kind without stubs); without the fields when they do not decode either;
// with only a name, namespace and the keepMeta fields when the metadata
// does not. nil when nothing decodes.
func Stub(dec runtime.Decoder, u map[string]any, keepMeta ...string) runtime.Object {
	apiVersion, _ := u["apiVersion"].(string)
	kind, _ := u["kind"].(string)
	fields, _ := Fields(kind)
	meta, _ := u["metadata"].(map[string]any)
	spec, _ := u["spec"].(map[string]any)
	keep := func(m map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if v, ok := m[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	fullMeta := keep(meta, append([]string{"name", "namespace", "labels", "generation", "creationTimestamp"}, keepMeta...)...)
	attempts := []map[string]any{
		{"metadata": fullMeta, "spec": keep(spec, fields...)},
		{"metadata": fullMeta},
		{"metadata": keep(meta, append([]string{"name", "namespace"}, keepMeta...)...)},
	}
	for _, a := range attempts {
		a["apiVersion"], a["kind"] = apiVersion, kind
		data, err := json.Marshal(a)
		if err != nil {
			continue
		}
		if obj, _, err := dec.Decode(data, nil, nil); err == nil {
			return obj
		}
	}
	return nil
}

// maxReasonLength bounds a decoding error quoted in statuses and warnings.
const maxReasonLength = 1024

// printable makes a decoding error fit for a status message: it may quote
// field names and values from the object, so characters that are not
// printable are escaped and it is cut to maxReasonLength bytes.
func printable(msg string) string {
	var b strings.Builder
	for _, r := range msg {
		s := string(r)
		if !unicode.IsPrint(r) {
			q := strconv.QuoteRune(r)
			s = q[1 : len(q)-1]
		}
		if b.Len()+len(s) > maxReasonLength {
			b.WriteString("...")
			break
		}
		b.WriteString(s)
	}
	return b.String()
}
