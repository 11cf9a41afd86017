// Package manifest reads Kubernetes manifests — multi-document YAML files,
// directories of them, and kustomizations — into unstructured objects, and
// applies them with server-side apply. The render command, the local runtime
// and the tests use it.
package manifest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Kustomize builds the kustomization in dir, as `kustomize build dir` does.
func Kustomize(dir string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// KustomizeOverlay builds what a user's overlay of the kustomization base
// with the given components builds (a config/components entry added to
// config/default, say): it writes that overlay in a temporary directory,
// with the relative paths kustomize wants, and removes it after.
func KustomizeOverlay(base string, components ...string) ([]*unstructured.Unstructured, error) {
	dir, err := os.MkdirTemp("", "overlay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rel := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		return filepath.Rel(dir, abs)
	}
	b, err := rel(base)
	if err != nil {
		return nil, err
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [" + b + "]\ncomponents:\n"
	for _, c := range components {
		r, err := rel(c)
		if err != nil {
			return nil, err
		}
		k += "- " + r + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		return nil, err
	}
	return Kustomize(dir)
}

// ReadFiles reads every object in the given files and directories (recursively,
// .yaml, .yml and .json files, kustomization files excluded), in lexical order
// of paths and document order within a file.
func ReadFiles(paths ...string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !isManifest(path) && path != p {
				return nil
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		got, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

func isManifest(path string) bool {
	if IsKustomization(path) {
		return false
	}
	switch filepath.Ext(path) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// IsKustomization says whether a file is a kustomization, by its name.
func IsKustomization(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "kustomization.") || base == "Kustomization"
}

// Decode decodes a multi-document YAML (or JSON) stream; empty documents are skipped.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", i)
		}
		objs = append(objs, u)
	}
}

// Apply applies objects with server-side apply as fieldOwner, CRDs and
// Namespaces first so the objects that need them can be applied in one call.
func Apply(ctx context.Context, c client.Client, fieldOwner string, objs []*unstructured.Unstructured, opts ...client.ApplyOption) error {
	ordered := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(ordered, func(i, j int) bool { return applyRank(ordered[i]) < applyRank(ordered[j]) })
	all := append([]client.ApplyOption{client.FieldOwner(fieldOwner), client.ForceOwnership}, opts...)
	for _, o := range ordered {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), all...); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

func applyRank(o *unstructured.Unstructured) int {
	switch o.GetKind() {
	case "CustomResourceDefinition":
		return 0
	case "Namespace":
		return 1
	}
	return 2
}
