package manager_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/internal/status"
)

// cleanStored is an object as the API server stored it, as a manifest would
// hold it: without what the server keeps for itself (uid, resourceVersion,
// managedFields) and without a status, unless the golden gives one (as it
// does for objects whose status Gatewall reads).
func cleanStored(stored, written *unstructured.Unstructured) *unstructured.Unstructured {
	u := stored.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	delete(u.Object, "status")
	if st, ok := written.Object["status"]; ok {
		u.Object["status"] = runtime.DeepCopyJSONValue(st)
	}
	return u
}

// renderedStatus is a status render sets.
type renderedStatus struct {
	gvk    schema.GroupVersionKind
	status any
}

// renderObjects renders objects as `gatewall render` does (YAML read with
// manifest.Decode, then render.Decode, render.LoadBundles from bundles
// when set, and render.Render), and returns the statuses by object ("Kind
// namespace/name") and the renderer's warnings.
func renderObjects(t *testing.T, objs []*unstructured.Unstructured, bundles string) (map[string]renderedStatus, string) {
	t.Helper()
	var doc bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		doc.WriteString("---\n")
		doc.Write(data)
	}
	read, err := manifest.Decode(doc.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	in, err := render.Decode(read, manager.DefaultControllerName, plm.GroupAppProtect, &warnings)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.LoadBundles(in, bundles); err != nil {
		t.Fatal(err)
	}
	res := render.Render(in, metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	out := map[string]renderedStatus{}
	for _, o := range res.Statuses {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		gvk := o.GetObjectKind().GroupVersionKind()
		id := gvk.Kind + " " + client.ObjectKeyFromObject(o).String()
		if o.GetNamespace() == "" {
			id = gvk.Kind + " " + o.GetName()
		}
		out[id] = renderedStatus{gvk: gvk, status: jsonValue(u["status"])}
	}
	return out, warnings.String()
}

// goldenStatusIDs are the objects a golden output has statuses for.
func goldenStatusIDs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Statuses []unstructured.Unstructured `json:"statuses"`
	}
	if err := yaml.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ids []string
	for _, s := range g.Statuses {
		if s.GetNamespace() == "" {
			ids = append(ids, s.GetKind()+" "+s.GetName())
		} else {
			ids = append(ids, s.GetKind()+" "+s.GetNamespace()+"/"+s.GetName())
		}
	}
	sort.Strings(ids)
	return ids
}

func liveID(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// liveStatus reads the status the API server holds for an object.
func liveStatus(id string, gvk schema.GroupVersionKind) (any, error) {
	_, ref, _ := strings.Cut(id, " ")
	key := types.NamespacedName{Name: ref}
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		key = types.NamespacedName{Namespace: ns, Name: name}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := env.Client.Get(context.Background(), key, u); err != nil {
		return nil, fmt.Errorf("reading %s: %w", id, err)
	}
	return jsonValue(u.Object["status"]), nil
}

// jsonValue is v as encoding/json decodes it (numbers as float64), so that
// values from a typed object and from the API server compare.
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func toJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// noDataPlaneMessages are the messages of a Programmed condition that is
// Pending only because no data plane applied the configuration: render's
// offline one, this manager's HeldFiles one, and the status package's
// defaults when the data plane gave no message.
var noDataPlaneMessages = map[string]bool{
	status.Offline.Message:                                                   true,
	held.State(types.NamespacedName{}, "").Message:                           true,
	"waiting for the data plane to apply the configuration":                  true,
	"waiting for the data plane to apply the configuration with this policy": true,
}

// noDataPlane replaces, in normalised statuses, the message of a
// Programmed condition Pending for want of a data plane.
const noDataPlane = "<no data plane applied the configuration>"

// bundleSources are what render (bundles from a directory) and the
// manager (bundles from PLM storage) say of a bundle's source, with what
// normaliseStatus replaces them by: a bundle that neither holds, and one
// whose content does not hash to its sha256.
var bundleSources = []struct {
	re          *regexp.Regexp
	replacement string
}{
	{regexp.MustCompile(`not among the bundles given to render \(--plm-bundles-dir\); in a cluster, Gatewall fetches it from PLM storage`), bundleMissing},
	{regexp.MustCompile(`fetching s3://\S+: 404 Not Found: NoSuchKey: The specified key does not exist\.`), bundleMissing},
	{regexp.MustCompile(`checksum mismatch: the bundle's sha256 is ([0-9a-f]{64})`), "<sha256 mismatch: the bundle's is $1>"},
	{regexp.MustCompile(`fetching s3://\S+: sha256 mismatch: PLM reported [0-9a-f]{64}, the \d+-byte object has ([0-9a-f]{64})`), "<sha256 mismatch: the bundle's is $1>"},
}

// bundleMissing replaces what either side says of a bundle it does not hold.
const bundleMissing = "<bundle not held>"

// normaliseStatus returns a copy of a status (as jsonValue returns it) with
// every condition's lastTransitionTime and every bundle's lastFetched
// removed, and the message of every Programmed condition that is Pending
// because no data plane applied the configuration (noDataPlaneMessages)
// replaced by noDataPlane, but for what the Gateway's NginxProxy adds to
// it. Where a message says where a bundle comes from
// (bundleSources), that is replaced, and the reason of a condition about a
// bundle neither side holds (render's Pending: nothing fetches offline;
// the manager's FetchError) too. Its status and reason, and everything
// else, are left as they are.
func normaliseStatus(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normaliseStatus(e)
		}
		delete(out, "lastTransitionTime") // a condition's
		delete(out, "lastFetched")
		if out["type"] == "Programmed" && out["reason"] == "Pending" {
			msg, _ := out["message"].(string)
			// What follows it (the NginxProxy's settings that are not
			// programmed) is compared.
			head, rest, _ := strings.Cut(msg, status.NotProgrammedPrefix)
			if noDataPlaneMessages[head] {
				if rest != "" {
					rest = status.NotProgrammedPrefix + rest
				}
				out["message"] = noDataPlane + rest
			}
		}
		if msg, ok := out["message"].(string); ok {
			for _, s := range bundleSources {
				msg = s.re.ReplaceAllString(msg, s.replacement)
			}
			out["message"] = msg
			if r := out["reason"]; strings.Contains(msg, bundleMissing) && (r == "Pending" || r == "FetchError") {
				out["reason"] = bundleMissing
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normaliseStatus(e)
		}
		return out
	}
	return v
}

// emptyStatus says whether a status holds nothing Gatewall sets.
func emptyStatus(v any) bool {
	m, _ := v.(map[string]any)
	for _, k := range []string{"conditions", "parents", "ancestors", "listeners"} {
		if l, _ := m[k].([]any); len(l) > 0 {
			return false
		}
	}
	return true
}

// fieldDiff is a difference between two statuses of an object.
type fieldDiff struct {
	id, path string
	a, b     any
}

func (d fieldDiff) format(aName, bName string) string {
	return fmt.Sprintf("%s %s:\n    %s: %s\n    %s: %s", d.id, d.path, aName, toJSON(d.a), bName, toJSON(d.b))
}

func formatDiffs(ds []fieldDiff, aName, bName string) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.format(aName, bName))
	}
	return out
}

// diffStatus lists the differences between two statuses of an object, by
// field path, each with both values.
func diffStatus(id string, a, b any, aName, bName string) []string {
	return formatDiffs(statusDiffs(id, a, b), aName, bName)
}

func statusDiffs(id string, a, b any) []fieldDiff {
	var out []fieldDiff
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		if aok && bok {
			keys := map[string]bool{}
			for k := range am {
				keys[k] = true
			}
			for k := range bm {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				walk(path+"."+k, am[k], bm[k])
			}
			return
		}
		al, aok := a.([]any)
		bl, bok := b.([]any)
		if aok && bok && len(al) == len(bl) {
			for i := range al {
				walk(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])
			}
			return
		}
		if !reflect.DeepEqual(a, b) {
			out = append(out, fieldDiff{id: id, path: path, a: a, b: b})
		}
	}
	walk("status", a, b)
	return out
}

// diffStatusSets lists the differences between two renders' statuses.
func diffStatusSets(a, b map[string]renderedStatus) []fieldDiff {
	var out []fieldDiff
	for id, sa := range a {
		sb, ok := b[id]
		if !ok {
			out = append(out, fieldDiff{id: id, path: "status", a: sa.status, b: nil})
			continue
		}
		out = append(out, statusDiffs(id, sa.status, sb.status)...)
	}
	for id, sb := range b {
		if _, ok := a[id]; !ok {
			out = append(out, fieldDiff{id: id, path: "status", a: nil, b: sb.status})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id+out[i].path < out[j].id+out[j].path })
	return out
}
