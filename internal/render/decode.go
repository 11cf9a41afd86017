package render

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/unreadable"
)

// Decode decodes objects strictly into their Go types and builds the input
// snapshot. Kinds the graph does not use are skipped with a warning.
//
// An object of a kind the graph uses that does not decode strictly (a
// number that does not fit its field, a string where a number belongs, an
// unknown field) is refused, never partly used, and the rest is rendered:
// one bad object must not stop the preview of every Gateway. The refusal is
// written to warnings and recorded in the snapshot (graph.Input.AddUnreadable),
// so that the statuses say so: the objects that refer to it name it, and an
// object Gatewall sets a status on gets one saying it is not accepted (from
// a stub holding only what identifies it and what it attaches to, see
// identityFields). An object without a readable name can be reported on
// warnings only. Duplicates (same kind, namespace and name) are warned
// about; the last one is used. The error is for input that cannot be
// re-encoded at all.
func Decode(objs []*unstructured.Unstructured, controllerName, plmGroup string, warnings io.Writer) (*graph.Input, error) {
	d := decoder{
		scheme: scheme.New(), warnings: warnings, seen: map[string]bool{},
		in: graph.NewInput(controllerName),
	}
	d.strict = serializer.NewCodecFactory(d.scheme, serializer.EnableStrict).UniversalDeserializer()
	d.lenient = serializer.NewCodecFactory(d.scheme).UniversalDeserializer()
	d.in.PLMGroup = plmGroup
	for _, u := range objs {
		if err := d.decode(u); err != nil {
			return nil, err
		}
	}
	return d.in, nil
}

type decoder struct {
	scheme          *runtime.Scheme
	strict, lenient runtime.Decoder
	in              *graph.Input
	warnings        io.Writer
	seen            map[string]bool
}

func (d *decoder) warn(format string, args ...any) {
	if d.warnings != nil {
		fmt.Fprintf(d.warnings, format+"\n", args...)
	}
}

func (d *decoder) decode(u *unstructured.Unstructured) error {
	apiServerDefaults(u)
	gvk := u.GroupVersionKind()
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	if key.Namespace == "" && isNamespaced(gvk.Kind) {
		key.Namespace = "default"
	}
	ref := graph.ObjectRef{Kind: gvk.Kind, Key: key}
	if !d.scheme.Recognizes(gvk) {
		d.warn("skipping %s: kind %s is not one Gatewall reads", ref, gvk)
		return nil
	}
	if !d.used(gvk) {
		d.warn("skipping %s: not used to render", ref)
		return nil
	}
	if id := gvk.GroupKind().String() + " " + key.String(); d.seen[id] {
		d.warn("duplicate %s: the manifests hold it more than once; the last one is used", ref)
	} else {
		d.seen[id] = true
	}
	if a := u.GetAnnotations(); a != nil {
		// The stubs' mark, set by the object's author: not ours to honour
		// (the manager drops it too).
		if _, marked := a[unreadable.Annotation]; marked {
			delete(a, unreadable.Annotation)
			u.SetAnnotations(a)
		}
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	obj, _, err := d.strict.Decode(data, nil, nil)
	if err != nil {
		d.refuse(u, ref, err)
		return nil
	}
	if co, ok := obj.(client.Object); ok && co.GetNamespace() == "" {
		co.SetNamespace(key.Namespace)
	}
	d.in.Add(obj)
	return nil
}

// used says whether the graph reads objects of a kind (PLM kinds only in
// the group in use), asking the graph itself rather than keeping a list.
func (d *decoder) used(gvk schema.GroupVersionKind) bool {
	obj, err := d.scheme.New(gvk)
	if err != nil {
		return false
	}
	probe := graph.NewInput("")
	probe.PLMGroup = d.in.PLMGroup
	return probe.Add(obj)
}

// refuse records an object that does not decode, and its stub.
func (d *decoder) refuse(u *unstructured.Unstructured, ref graph.ObjectRef, err error) {
	reason := unreadable.Reason(err)
	if ref.Key.Name == "" {
		d.warn("refusing a %s in namespace %s: %s; it has no readable name, so nothing can report it", ref.Kind, ref.Key.Namespace, reason)
		return
	}
	d.warn("refusing %s: %s; it is left out of the render", ref, reason)
	d.in.AddUnreadable(ref, reason)
	if _, stubbed := unreadable.Fields(ref.Kind); !stubbed {
		return
	}
	if stub := unreadable.Stub(d.lenient, u.Object); stub != nil {
		if co, ok := stub.(client.Object); ok {
			co.SetNamespace(ref.Key.Namespace)
			co.SetName(ref.Key.Name)
			// Marked as the manager marks its stubs: Add records it as
			// unreadable, and keeps the kinds the graph must not use
			// (an NginxProxy) apart.
			co.SetAnnotations(map[string]string{unreadable.Annotation: reason})
		}
		d.in.Add(stub)
	}
}

// plmGroup returns the forced group, else the one the manifests use.
func plmGroup(objs []*unstructured.Unstructured, forced string) string {
	if forced != "" {
		return forced
	}
	found := ""
	for _, o := range objs {
		switch g := o.GroupVersionKind().Group; g {
		case plm.GroupAppProtect:
			return g
		case plm.GroupWAF:
			found = g
		}
	}
	if found == "" {
		return plm.GroupAppProtect
	}
	return found
}

// isNamespaced says whether objects of a kind the graph uses are namespaced.
func isNamespaced(kind string) bool {
	switch kind {
	case "GatewayClass", "Namespace":
		return false
	}
	return true
}
