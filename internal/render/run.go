package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	apiplm "github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/validation"
)

// StatusFile is the name of the statuses file in the output directory.
const StatusFile = "status.yaml"

// EndpointsFile holds, in each Gateway's directory, the endpoints of its
// upstreams by upstream ID: what the data plane receives apart from the
// files, without a reload when only they change.
const EndpointsFile = "endpoints.yaml"

// Options configure a render run.
type Options struct {
	// Paths are manifest files or directories, read as they are.
	Paths []string
	// Kustomizations are directories built with kustomize (as kubectl -k does).
	Kustomizations []string
	// OutputDir receives <namespace>_<gateway>/<absolute path> files and status.yaml.
	OutputDir string
	// ControllerName is the GatewayClass controllerName to render for.
	ControllerName string
	// Now stamps condition transition times; zero means the current time.
	Now time.Time
	// Warnings receives notes about skipped, duplicate and refused objects.
	Warnings io.Writer
	// PLMGroup is the PLM API group to read APPolicy/APLogConf from; ""
	// picks the one the manifests use (appprotect.f5.com when both).
	PLMGroup string
	// BundlesDir holds WAF bundles named <sha256>.tgz, standing in for PLM
	// storage offline; each is verified against its name.
	BundlesDir string
	// PLMScope is where the manager may fetch bundles from (its
	// --plm-storage-bucket and --plm-storage-prefix); the zero Scope
	// admits every location.
	PLMScope apiplm.Scope
	// Snippets is the manager's --snippets: SnippetsFilters and
	// SnippetsPolicies are used.
	Snippets bool
	// GatewayAPIChannel is the channel whose CRDs the cluster has
	// (ChannelStandard when empty): the GatewayClass claims what they carry.
	GatewayAPIChannel string
}

// Run reads the manifests, renders them and writes the results. Only input
// that cannot be read at all (a file that cannot be read or is not YAML, a
// document without apiVersion and kind, a kustomization that does not
// build) is an error. An object that does not decode into its kind is
// refused and reported (see Decode), and invalid resources are reported in
// status.yaml like the manager would: the rest is rendered.
func Run(opts Options) error {
	objs, err := manifest.ReadFiles(opts.Paths...)
	if err != nil {
		return err
	}
	warnUnbuiltKustomizations(opts.Paths, opts.Warnings)
	for _, dir := range opts.Kustomizations {
		built, err := manifest.Kustomize(dir)
		if err != nil {
			return err
		}
		objs = append(objs, built...)
	}
	in, err := Decode(objs, opts.ControllerName, plmGroup(objs, opts.PLMGroup), opts.Warnings)
	if err != nil {
		return err
	}
	if err := opts.PLMScope.Validate(); err != nil {
		return fmt.Errorf("PLM storage bucket and prefix: %w", err)
	}
	in.PLMScope = opts.PLMScope
	in.Snippets = opts.Snippets
	if err := LoadBundles(in, opts.BundlesDir); err != nil {
		return err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	serves, err := Serves(opts.GatewayAPIChannel)
	if err != nil {
		return err
	}
	res := RenderFor(in, metav1.NewTime(now.UTC().Truncate(time.Second)), serves)
	warnHeld(res, opts.Warnings)
	return Write(res, opts.OutputDir)
}

// warnUnbuiltKustomizations warns about kustomization files in the
// directories read as plain manifests: their patches and generators are
// not applied, and files they do not list are read all the same.
func warnUnbuiltKustomizations(paths []string, warnings io.Writer) {
	if warnings == nil {
		return
	}
	for _, p := range paths {
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && manifest.IsKustomization(path) {
				fmt.Fprintf(warnings, "%s is not built: the files of %s are read as they are (use -k %s to build the kustomization)\n",
					path, filepath.Dir(path), filepath.Dir(path))
			}
			return nil
		})
	}
}

// warnHeld says which Gateways' configurations the manager would hold
// back, and why: their files are not written.
func warnHeld(res Result, warnings io.Writer) {
	if warnings == nil {
		return
	}
	keys := make([]types.NamespacedName, 0, len(res.Held))
	for k := range res.Held {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		fmt.Fprintf(warnings, "Gateway %s: no files written: %s\n", k, res.Held[k])
	}
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

// Write writes each Gateway's files under dir/<namespace>_<name>/ at their
// absolute paths, its dynamic endpoints to dir/<namespace>_<name>/EndpointsFile,
// and the statuses to dir/status.yaml. Nothing is written
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
		eps, err := yaml.Marshal(res.Endpoints[k])
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, k.Namespace+"_"+k.Name, EndpointsFile), eps, 0o644); err != nil {
			return err
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
