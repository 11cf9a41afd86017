package manager_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/manager"
)

// parityRuns numbers the runs of goldens: namespaces are never deleted
// for good (no namespace controller runs), so a golden run again (-count)
// needs other names.
var parityRuns atomic.Int64

// parityNames maps a golden's namespaces and GatewayClass names to the
// test's: parity-<golden>-<run>-<original>, so that they sort as the
// originals do (conflicts are decided by namespace/name between objects
// as old).
type parityNames struct {
	golden     string
	namespaces map[string]string
	classes    map[string]string
	// backRep maps the test's names back to the golden's.
	backRep *strings.Replacer
}

func newParityNames(t *testing.T, golden string, objs []*unstructured.Unstructured) *parityNames {
	t.Helper()
	n := &parityNames{golden: golden, namespaces: map[string]string{}, classes: map[string]string{}}
	run := parityRuns.Add(1)
	fresh := func(orig string) string {
		name := fmt.Sprintf("parity-%s-%d-%s", golden, run, orig)
		if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
			t.Fatalf("name %q: %s", name, strings.Join(msgs, "; "))
		}
		return name
	}
	for _, u := range objs {
		switch {
		case u.GetKind() == "Namespace":
			n.namespaces[u.GetName()] = fresh(u.GetName())
		case u.GetKind() == "GatewayClass":
			n.classes[u.GetName()] = fresh(u.GetName())
		case namespaced(t, u):
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			n.namespaces[ns] = fresh(ns)
		}
	}
	back := map[string]string{}
	for orig, name := range n.namespaces {
		back[name] = orig
	}
	for orig, name := range n.classes {
		back[name] = orig
	}
	// Longest first: a name that starts with another is replaced whole.
	ours := slices.Collect(maps.Keys(back))
	sort.Slice(ours, func(i, j int) bool { return len(ours[i]) > len(ours[j]) })
	var pairs []string
	for _, name := range ours {
		pairs = append(pairs, name, back[name])
	}
	n.backRep = strings.NewReplacer(pairs...)
	return n
}

func (n *parityNames) back(s string) string { return n.backRep.Replace(s) }

func namespaced(t *testing.T, u *unstructured.Unstructured) bool {
	t.Helper()
	ok, err := env.Client.IsObjectNamespaced(u)
	if err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return ok
}

// rewrite returns the golden's objects in the test's namespaces, with its
// GatewayClasses renamed, and apart, its Namespace objects and one for each
// namespace the golden uses without one.
func (n *parityNames) rewrite(t *testing.T, golden []*unstructured.Unstructured) (objs, namespaces []*parityObject) {
	t.Helper()
	for _, g := range golden {
		u := g.DeepCopy()
		o := &parityObject{written: u, goldenTime: u.GetCreationTimestamp()}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		switch {
		case u.GetKind() == "Namespace":
			o.id = "Namespace " + u.GetName()
			u.SetName(n.namespaces[u.GetName()])
			namespaces = append(namespaces, o)
			continue
		case u.GetKind() == "GatewayClass":
			o.id = "GatewayClass " + u.GetName()
			u.SetName(n.classes[u.GetName()])
			if cn, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName"); cn == goldenControllerName && cn != manager.DefaultControllerName {
				_ = unstructured.SetNestedField(u.Object, manager.DefaultControllerName, "spec", "controllerName")
			}
		default:
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			o.id = u.GetKind() + " " + ns + "/" + u.GetName()
			u.SetNamespace(n.namespaces[ns])
		}
		if u.GetKind() == "Gateway" {
			if class, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName"); n.classes[class] != "" {
				_ = unstructured.SetNestedField(u.Object, n.classes[class], "spec", "gatewayClassName")
			}
		}
		// References name namespaces in fields called namespace (parentRefs,
		// backendRefs, certificateRefs, ReferenceGrants' from, parametersRef,
		// ...), and label selectors may name one by its metadata.name label.
		for k, v := range u.Object {
			if k != "metadata" {
				u.Object[k] = n.rewriteRefs(v)
			}
		}
		objs = append(objs, o)
	}
	have := map[string]bool{}
	for _, ns := range namespaces {
		have[ns.written.GetName()] = true
	}
	for orig, name := range n.namespaces {
		if !have[name] {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("Namespace")
			u.SetName(name)
			// Not in the golden, so not rendered: the API server has it.
			namespaces = append(namespaces, &parityObject{id: "Namespace " + orig, written: u, extra: true})
		}
	}
	sort.Slice(namespaces, func(i, j int) bool { return namespaces[i].id < namespaces[j].id })
	return objs, namespaces
}

func (n *parityNames) rewriteRefs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "namespace" || k == "kubernetes.io/metadata.name") && n.namespaces[s] != "" {
				v[k] = n.namespaces[s]
				continue
			}
			v[k] = n.rewriteRefs(e)
		}
	case []any:
		for i, e := range v {
			v[i] = n.rewriteRefs(e)
		}
	}
	return v
}

// createNamespaces creates the namespaces and keeps them as stored.
func (n *parityNames) createNamespaces(t *testing.T, namespaces []*parityObject) {
	t.Helper()
	for _, ns := range namespaces {
		u := ns.written.DeepCopy()
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("creating %s: %v", ns.id, err)
		}
		ns.stored = cleanStored(u, ns.written)
	}
}

// cleanup deletes the objects, the namespaces and the classes.
func (n *parityNames) cleanup(t *testing.T, objs []*parityObject) {
	ctx := context.Background()
	for i := len(objs) - 1; i >= 0; i-- {
		if objs[i].stored == nil {
			continue // never created (refused)
		}
		if err := env.Client.Delete(ctx, objs[i].written.DeepCopy()); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", objs[i].id, err)
		}
	}
	for _, name := range n.namespaces {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(name)
		if err := env.Client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	}
}

// kindRank orders the creation of objects as old as one another: what is
// referred to before what refers to it, so that the manager never sees a
// reference to an object that is about to be created.
func kindRank(kind string) int {
	switch kind {
	case "GatewayClass":
		return 0
	case "Secret", "ConfigMap", "NginxProxy", "Service":
		return 1
	case "EndpointSlice", "ReferenceGrant":
		return 2
	case "Gateway":
		return 3
	case "ListenerSet":
		return 4
	case "HTTPRoute", "GRPCRoute", "TLSRoute":
		return 5
	}
	return 6
}

// createInGoldenOrder creates the objects oldest first by their golden
// creationTimestamp (none is oldest, as render reads it). The API server
// stamps creation times to the second: objects the golden makes as old as
// one another are created in one go (what is referred to first, kindRank,
// then by namespace/name, as ties are decided), and each younger group in
// a later second.
func createInGoldenOrder(t *testing.T, objs []*parityObject) {
	t.Helper()
	ordered := slices.Clone(objs)
	sort.SliceStable(ordered, func(i, j int) bool {
		a, b := ordered[i], ordered[j]
		if !a.goldenTime.Equal(&b.goldenTime) {
			return a.goldenTime.Before(&b.goldenTime)
		}
		if ra, rb := kindRank(a.written.GetKind()), kindRank(b.written.GetKind()); ra != rb {
			return ra < rb
		}
		return a.id < b.id
	})
	var groupStart []int
	for i, o := range ordered {
		if i == 0 || !o.goldenTime.Equal(&ordered[i-1].goldenTime) {
			groupStart = append(groupStart, i)
			if i > 0 {
				// Start the group in a later second than the previous one's objects.
				now := time.Now()
				time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
			}
		}
		u := o.written.DeepCopy()
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("creating %s: %v", o.id, err)
		}
		// A status the golden gives (written by PLM, say, or by Gatewall
		// before: the bundles a WAFGatewayBindingPolicy has in force) is
		// the status subresource's: the API server drops it from a create.
		// The manager may write one first: the golden's replaces it, as if
		// it had been there before.
		if st, ok := o.written.Object["status"]; ok {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
					return err
				}
				u.Object["status"] = runtime.DeepCopyJSONValue(st)
				return env.Client.Status().Update(context.Background(), u)
			})
			if err != nil {
				t.Fatalf("setting the status of %s: %v", o.id, err)
			}
		}
		o.created = jsonValue(u.Object["status"])
		o.stored = cleanStored(u, o.written)
	}
	// Each group is younger than the one before it.
	for g := 1; g < len(groupStart); g++ {
		prev := ordered[groupStart[g]-1].stored.GetCreationTimestamp()
		first := ordered[groupStart[g]].stored.GetCreationTimestamp()
		if !prev.Before(&first) {
			t.Fatalf("%s (created %s) is not younger than %s (created %s), unlike in the golden",
				ordered[groupStart[g]].id, first, ordered[groupStart[g]-1].id, prev)
		}
	}
}
