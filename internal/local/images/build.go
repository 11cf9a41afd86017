package images

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// BuildOptions configure Build.
type BuildOptions struct {
	// Root is the repository root: the build context.
	Root string
	// OutDir receives one docker-archive per image (Spec.Archive + ".tar").
	OutDir string
	// Aliases are more names for the images (see Specs).
	Aliases []string
	// Log receives one line per image.
	Log io.Writer
	// RunOnly builds only what running Gatewall locally needs (the
	// product images, the runtime's and the sample's backend), not the
	// tests' images.
	RunOnly bool
}

// Build builds every image with buildah (layers cached: an unchanged image
// rebuilds in about a second) and exports those whose image ID or tags
// changed since the last export. It fails on the first image that does not
// build, with buildah's output.
func Build(ctx context.Context, opts BuildOptions) error {
	for _, tool := range []string{"buildah", "skopeo"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("images: %s is missing: run hack/node-packages.sh", tool)
		}
	}
	var err error
	if opts.OutDir, err = filepath.Abs(opts.OutDir); err != nil {
		return err
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return err
	}
	parts := filepath.Join(opts.OutDir, "parts")
	if err := os.MkdirAll(parts, 0o755); err != nil {
		return err
	}
	var archives []string
	changed := false
	specs := Specs(opts.Aliases)
	if opts.RunOnly {
		specs = slices.DeleteFunc(specs, func(s Spec) bool { return !s.Run })
	}
	for _, s := range specs {
		start := time.Now()
		id, err := build(ctx, opts.Root, s)
		if err != nil {
			return err
		}
		what := "built"
		if s.Archive != "" {
			exported, err := export(ctx, parts, s, id)
			if err != nil {
				return err
			}
			what = "unchanged"
			if exported {
				what, changed = "exported", true
			}
		}
		fmt.Fprintf(opts.Log, "image %s (%s): %s in %s\n", s.Tags[0], shortID(id), what, time.Since(start).Round(time.Millisecond))
	}
	// The bundle holds every image built here, now or before (a run-only
	// build keeps the tests' images a full one exported).
	for _, s := range Specs(opts.Aliases) {
		if a := filepath.Join(parts, s.Archive+".tar"); s.Archive != "" {
			if _, err := os.Stat(a); err == nil {
				archives = append(archives, a)
			}
		}
	}
	bundle := filepath.Join(opts.OutDir, Bundle)
	members := strings.Join(archives, "\n")
	if old, err := os.ReadFile(bundle + ".list"); err == nil && string(old) == members && !changed {
		if _, err := os.Stat(bundle); err == nil {
			return nil
		}
	}
	start := time.Now()
	if err := merge(bundle, archives); err != nil {
		return err
	}
	if err := os.WriteFile(bundle+".list", []byte(members), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(opts.Log, "%s: %d images in %s\n", bundle, len(archives), time.Since(start).Round(time.Millisecond))
	return nil
}

// BundlePath is the archive of every image Build wrote to dir.
func BundlePath(dir string) (string, error) {
	f := filepath.Join(dir, Bundle)
	if _, err := os.Stat(f); err != nil {
		return "", fmt.Errorf("images: %s is missing: run `make images`", f)
	}
	return f, nil
}

// build runs buildah bud for s and returns the image ID. --pull=never keeps
// it offline: every base must already be in buildah's storage.
func build(ctx context.Context, root string, s Spec) (string, error) {
	iid, err := os.CreateTemp("", "gatewall-iid-")
	if err != nil {
		return "", err
	}
	iid.Close()
	defer os.Remove(iid.Name())
	// --network=host: RUN steps (apt-get) use the host's network as is;
	// buildah's default would add a bridge and iptables rules to the host.
	args := []string{"bud", "--layers", "--pull=never", "--network=host", "--format=docker", "--iidfile", iid.Name(), "-f", s.Dockerfile}
	for _, k := range sortedKeys(s.Args) {
		args = append(args, "--build-arg", k+"="+s.Args[k])
	}
	for _, t := range s.Tags {
		args = append(args, "-t", t)
	}
	if _, err := run(ctx, root, "buildah", append(args, ".")...); err != nil {
		return "", fmt.Errorf("images: building %s from %s: %w", s.Tags[0], s.Dockerfile, err)
	}
	id, err := os.ReadFile(iid.Name())
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(strings.TrimSpace(string(id)), "sha256:"), nil
}

// export writes s's docker-archive with every tag, unless the archive holds
// image id with the same tags already (recorded beside it).
func export(ctx context.Context, dir string, s Spec, id string) (bool, error) {
	archive := filepath.Join(dir, s.Archive+".tar")
	stamp := archive + ".id"
	want := id + " " + strings.Join(s.Tags, " ") + "\n"
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		if _, err := os.Stat(archive); err == nil {
			return false, nil
		}
	}
	tmp := archive + ".tmp"
	_ = os.Remove(tmp)
	args := []string{"copy", "--quiet", "containers-storage:" + id, "docker-archive:" + tmp + ":" + s.Tags[0]}
	for _, t := range s.Tags[1:] {
		args = append(args, "--additional-tag", t)
	}
	if _, err := run(ctx, dir, "skopeo", args...); err != nil {
		return false, fmt.Errorf("images: exporting %s: %w", s.Tags[0], err)
	}
	if err := os.Rename(tmp, archive); err != nil {
		return false, err
	}
	return true, os.WriteFile(stamp, []byte(want), 0o644)
}

// run runs a command in dir; its error carries the output's tail.
func run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out.Bytes(), 40))
	}
	return out.Bytes(), nil
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
