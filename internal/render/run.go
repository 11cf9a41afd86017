package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/validation"
)

// StatusFile is the name of the statuses file in the output directory.
const StatusFile = "status.yaml"

// Options configure a render run.
type Options struct {
	// Paths are manifest files or directories.
	Paths []string
	// OutputDir receives <namespace>_<gateway>/<absolute path> files and status.yaml.
	OutputDir string
	// ControllerName is the GatewayClass controllerName to render for.
	ControllerName string
	// Now stamps condition transition times; zero means the current time.
	Now time.Time
	// Warnings receives notes about skipped objects.
	Warnings io.Writer
	// PLMGroup is the PLM API group to read APPolicy/APLogConf from; ""
	// picks the one the manifests use (appprotect.f5.com when both).
	PLMGroup string
	// BundlesDir holds WAF bundles named <sha256>.tgz, standing in for PLM
	// storage offline; each is verified against its name.
	BundlesDir string
}

// Run reads the manifests, renders them and writes the results. Only
// unreadable input (a file that cannot be read or an object that does not
// decode strictly into its kind) is an error; invalid resources are reported
// in status.yaml like the manager would.
func Run(opts Options) error {
	objs, err := manifest.ReadFiles(opts.Paths...)
	if err != nil {
		return err
	}
	in, err := Decode(objs, opts.ControllerName, plmGroup(objs, opts.PLMGroup), opts.Warnings)
	if err != nil {
		return err
	}
	if err := LoadBundles(in, opts.BundlesDir); err != nil {
		return err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	res := Render(in, metav1.NewTime(now.UTC().Truncate(time.Second)))
	return Write(res, opts.OutputDir)
}

// Decode decodes objects strictly into their Go types and builds the input
// snapshot. Kinds the graph does not use are skipped with a warning.
func Decode(objs []*unstructured.Unstructured, controllerName, plmGroup string, warnings io.Writer) (*graph.Input, error) {
	s := scheme.New()
	decoder := serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
	in := graph.NewInput(controllerName)
	in.PLMGroup = plmGroup
	for _, u := range objs {
		apiServerDefaults(u)
		data, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
		if !s.Recognizes(u.GroupVersionKind()) {
			if warnings != nil {
				fmt.Fprintf(warnings, "skipping %s: kind %s is not one Gatewall reads\n", id, u.GroupVersionKind())
			}
			continue
		}
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if co, ok := obj.(client.Object); ok && co.GetNamespace() == "" && isNamespaced(co) {
			co.SetNamespace("default")
		}
		if !in.Add(obj) && warnings != nil {
			fmt.Fprintf(warnings, "skipping %s: not used to render\n", id)
		}
	}
	return in, nil
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

// LoadBundles reads <sha256>.tgz bundles from dir into the snapshot,
// verified like fetched ones: a file whose content does not hash to its name
// is an IntegrityError. Empty dir: no bundles.
func LoadBundles(in *graph.Input, dir string) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".tgz") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		want := strings.TrimSuffix(name, ".tgz")
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			in.Bundles[want] = graph.Bundle{State: graph.BundleFailed, Reason: "IntegrityError",
				Message: fmt.Sprintf("checksum mismatch: the bundle's sha256 is %s", got)}
			continue
		}
		in.Bundles[want] = graph.Bundle{State: graph.BundleFetched, Data: data}
	}
	return nil
}

// isNamespaced says whether an object of a kind the graph uses is namespaced.
func isNamespaced(o runtime.Object) bool {
	switch o.GetObjectKind().GroupVersionKind().Kind {
	case "GatewayClass", "Namespace":
		return false
	}
	return true
}

// Write writes each Gateway's files under dir/<namespace>_<name>/ at their
// absolute paths, and the statuses to dir/status.yaml. Nothing is written
// outside dir: a Gateway whose namespace or name is not a valid object name
// (the API server refuses them, but a manifest may hold one), or a file
// whose path leaves its Gateway's directory, is an error, found before
// anything is written.
func Write(res Result, dir string) error {
	keys := make([]types.NamespacedName, 0, len(res.Files))
	for k := range res.Files {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	paths := map[types.NamespacedName][]string{}
	for _, k := range keys {
		if err := validation.ObjectReference(k.Namespace, k.Name); err != nil {
			return fmt.Errorf("gateway %s: %w; its files are not written", k, err)
		}
		root := filepath.Join(dir, k.Namespace+"_"+k.Name)
		for _, f := range res.Files[k] {
			p, err := within(root, f.Path)
			if err != nil {
				return fmt.Errorf("gateway %s: %w", k, err)
			}
			paths[k] = append(paths[k], p)
		}
	}
	for _, k := range keys {
		for i, f := range res.Files[k] {
			p := paths[k][i]
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
				return err
			}
		}
	}
	data, err := MarshalStatuses(res.Statuses)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, StatusFile), data, 0o644)
}

// within returns where a data-plane file is written under root, or an error
// when its path would leave root.
func within(root, path string) (string, error) {
	p := filepath.Join(root, filepath.FromSlash(path))
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file %q would be written outside its directory %s", path, root)
	}
	return p, nil
}

// MarshalStatuses writes objects as a YAML stream of apiVersion, kind,
// name, namespace and status.
func MarshalStatuses(objs []client.Object) ([]byte, error) {
	var b bytes.Buffer
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		meta := map[string]any{"name": o.GetName()}
		if o.GetNamespace() != "" {
			meta["namespace"] = o.GetNamespace()
		}
		gvk := o.GetObjectKind().GroupVersionKind()
		doc, err := yaml.Marshal(map[string]any{
			"apiVersion": gvk.GroupVersion().String(),
			"kind":       gvk.Kind,
			"metadata":   meta,
			"status":     u["status"],
		})
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), nil
}
