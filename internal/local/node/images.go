package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Runner is the host command that plays a container image.
type Runner struct {
	// Command is the image's entrypoint: a host path, or a name looked up on
	// the container's PATH. Empty means the image has none and the container
	// must set `command` (like local/exec).
	Command []string
	// Args are the image's default arguments (its CMD).
	Args []string
	// Env is the image's environment ("NAME=value"), under the container's
	// own env. PATH defaults to the node process's PATH.
	Env []string
	// WorkingDir is the image's working directory; "/" when empty.
	WorkingDir string
	// Hint completes the error when Command's program does not exist, e.g.
	// "run hack/echo-basic.sh to build it".
	Hint string
}

// Images maps image repositories ("gcr.io/k8s-staging-gateway-api/echo-basic")
// to the runners that play them. A pod's image matches by repository: tag and
// digest are ignored.
type Images map[string]Runner

// Image repositories with built-in runners.
const (
	// EchoImage is the Gateway API conformance echo server; EchoReleaseImage
	// is its released repository, which the conformance manifests use.
	EchoImage        = "gcr.io/k8s-staging-gateway-api/echo-basic"
	EchoReleaseImage = "registry.k8s.io/gateway-api/echo-basic"
	// ExecImage runs the container's command as is; for tests.
	ExecImage = "local/exec"
)

// DefaultImages is the image table for binDir (the repository's bin/): the
// conformance echo server (bin/echo-basic, built by hack/echo-basic.sh) and
// local/exec. The data-plane image is added by whoever builds it.
func DefaultImages(binDir string) Images {
	echo := Runner{Command: []string{filepath.Join(binDir, "echo-basic")}, Hint: "run hack/echo-basic.sh to build it"}
	return Images{
		EchoImage:        echo,
		EchoReleaseImage: echo,
		ExecImage:        {},
	}
}

// Lookup finds the runner for an image reference. Keys that name the same
// repository are tried in sorted order, so the choice is deterministic.
func (im Images) Lookup(image string) (Runner, bool) {
	want := Repository(image)
	for _, repo := range sortedKeys(im) {
		if Repository(repo) == want {
			return im[repo], true
		}
	}
	return Runner{}, false
}

// Repository normalizes an image reference to its repository: without tag or
// digest, with Docker Hub's implicit registry and library/ spelled out.
func Repository(image string) string {
	ref := image
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	first, rest, found := strings.Cut(ref, "/")
	switch {
	case !found:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref
	default:
		return "docker.io/" + first + "/" + rest
	}
}

// argv applies Kubernetes' rules: `command` replaces the entrypoint and drops
// the image's default args; `args` replaces the default args.
func (r Runner) argv(c *corev1.Container) ([]string, error) {
	entry, args := r.Command, r.Args
	if len(c.Command) > 0 {
		entry, args = c.Command, nil
	}
	if len(c.Args) > 0 {
		args = c.Args
	}
	if len(entry) == 0 {
		return nil, fmt.Errorf("image %s has no entrypoint: the container must set command", c.Image)
	}
	return append(append([]string(nil), entry...), args...), nil
}

// findProgram resolves argv[0] as a runtime would: a path as is, a bare name
// on the container's PATH.
func findProgram(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		info, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if info.IsDir() || info.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", name)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable file %q not found in $PATH", name)
}
