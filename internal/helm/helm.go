package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gatewall/gatewall/internal/manifest"
)

// Binary is where `make helm` links helm, relative to the repository root.
const Binary = "bin/helm"

// Helm runs one helm binary.
type Helm struct {
	// Path is the helm executable.
	Path string
	// Kubeconfig is the cluster Install and Uninstall talk to.
	Kubeconfig string
	// Home holds helm's cache, configuration and data (its repositories,
	// registry logins, plugins); "" leaves helm's own defaults, under $HOME.
	Home string
}

// Release is one installation of a chart.
type Release struct {
	// Name is the release's name (the chart's .Release.Name).
	Name string
	// Namespace is the release's (the chart's .Release.Namespace).
	Namespace string
	// Chart is the chart's directory.
	Chart string
	// Values are given to helm as a values file: they override the
	// chart's values.yaml, maps merged key by key.
	Values map[string]any
}

// Template renders a release as `helm template --include-crds` does,
// without a cluster: the chart's crds/ and its templates.
func (h Helm) Template(ctx context.Context, r Release) ([]*unstructured.Unstructured, error) {
	out, err := h.run(ctx, r, "template", r.Name, r.Chart, "--namespace", r.Namespace, "--include-crds")
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Decode(out)
	if err != nil {
		return nil, fmt.Errorf("helm template %s: %w", r.Chart, err)
	}
	return objs, nil
}

// Install installs the release, or upgrades it when it is installed
// (`helm upgrade --install`), creating its namespace when missing. Helm
// installs the chart's crds/ only when the release is first installed, and
// skips those the cluster already has.
func (h Helm) Install(ctx context.Context, r Release) error {
	_, err := h.run(ctx, r, "upgrade", "--install", r.Name, r.Chart, "--namespace", r.Namespace, "--create-namespace")
	return err
}

// Uninstall removes the release's objects; the CRDs of its crds/ and its
// namespace stay, as with `helm uninstall`.
func (h Helm) Uninstall(ctx context.Context, name, namespace string) error {
	_, err := h.run(ctx, Release{Name: name, Namespace: namespace}, "uninstall", name, "--namespace", namespace, "--ignore-not-found")
	return err
}

// run runs helm with args, and r's values as a values file, and returns
// its standard output.
func (h Helm) run(ctx context.Context, r Release, args ...string) ([]byte, error) {
	if _, err := os.Stat(h.Path); err != nil {
		return nil, fmt.Errorf("helm not found (%w): run `make helm`", err)
	}
	if r.Values != nil {
		// JSON is YAML: helm reads it as a values file.
		data, err := json.Marshal(r.Values)
		if err != nil {
			return nil, fmt.Errorf("helm %s: values: %w", args[0], err)
		}
		f, err := os.CreateTemp("", "gatewall-values-*.json")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(data); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		args = append(args, "--values", f.Name())
	}
	cmd := exec.CommandContext(ctx, h.Path, args...)
	cmd.Env = os.Environ()
	if h.Kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+h.Kubeconfig)
	}
	if h.Home != "" {
		for env, dir := range map[string]string{"HELM_CACHE_HOME": "cache", "HELM_CONFIG_HOME": "config", "HELM_DATA_HOME": "data"} {
			cmd.Env = append(cmd.Env, env+"="+filepath.Join(h.Home, dir))
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
