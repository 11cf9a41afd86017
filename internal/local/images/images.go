// Package images names the container images the local runtime runs and
// builds them from the repository's Dockerfiles with buildah, offline: every
// base is local (hack/base-image.sh makes a Debian one from Debian's
// packages, the others are FROM scratch), and the binaries they copy are
// built by `make image-binaries` into bin/linux/<arch>/. Each image is
// exported as a docker-archive the local node imports into containerd at
// start, so that no pod ever pulls.
//
// `make images` runs Build. The product images (manager, data plane) build
// the same way with `docker build` on a machine with a registry; the test
// images are labelled as such and never shipped.
package images

import (
	"slices"
	"strings"
)

// The images the local runtime and its tests name.
const (
	// Manager is Gatewall's manager, build/manager/Dockerfile.
	Manager = "ghcr.io/gatewall/gatewall:edge"
	// DataPlane is NGINX with nginx-agent, build/dataplane/Dockerfile: the
	// provisioner's default (provisioner.DefaultImages.NGINX).
	DataPlane = "ghcr.io/gatewall/dataplane:edge"
	// Pause holds each pod's namespaces (containerd's sandbox image).
	Pause = "localhost/gatewall/pause:local"
	// CoreDNS is the local cluster's DNS.
	CoreDNS = "localhost/gatewall/coredns:local"
	// Echo is the Gateway API conformance echo server: the sample's and the
	// end-to-end tests' backend. The image has every echo-basic name the
	// conformance manifests and config/samples use.
	Echo = "registry.k8s.io/gateway-api/echo-basic:v1.5.1"
	// TestBackend is test/e2e/testbackend. Test image.
	TestBackend = "localhost/gatewall/testbackend:local"
	// DataPlaneTest is DataPlane with the App Protect test double module.
	// Test image.
	DataPlaneTest = "localhost/gatewall/dataplane-test:local"
	// WAFStandIn plays F5's WAF enforcer and config manager containers,
	// which cannot run here. Test double.
	WAFStandIn = "localhost/gatewall/waf-standin:local"
)

// Debian is the Debian base hack/base-image.sh commits to buildah's
// storage: the data plane is built FROM it.
const Debian = "localhost/gatewall/debian:bookworm"

// Static is the base of the images that run one static binary, built from
// Debian (build/local/static): the local stand-in for distroless.
const Static = "localhost/gatewall/static:local"

// Spec is how one image is built and exported.
type Spec struct {
	// Archive names the docker-archive file in the output directory; an
	// image without one is only a base for others.
	Archive string
	// Dockerfile is relative to the repository root, the build context.
	Dockerfile string
	// Tags name the image; the first is its main name.
	Tags []string
	// Args are build arguments.
	Args map[string]string
	// Run says running Gatewall locally needs it (make run-local): the
	// product's images, the runtime's and the sample's backend; the
	// others only tests need.
	Run bool
}

// Specs are every image, in build order (an image after those it is built
// FROM). aliases are the image names other manifests use (the conformance
// suite's, say): each echo-basic and CoreDNS name becomes another tag of
// that image.
func Specs(aliases []string) []Spec {
	static := map[string]string{"BASE_IMAGE": Static}
	return []Spec{
		{Dockerfile: "build/local/static/Dockerfile", Tags: []string{Static}, Args: map[string]string{"DEBIAN_IMAGE": Debian}, Run: true},
		{Archive: "pause", Dockerfile: "build/local/pause/Dockerfile", Tags: []string{Pause}, Run: true},
		{Archive: "coredns", Dockerfile: "build/local/coredns/Dockerfile", Tags: withAliases(CoreDNS, aliases), Args: static, Run: true},
		{Archive: "manager", Dockerfile: "build/manager/Dockerfile", Tags: []string{Manager}, Args: static, Run: true},
		{Archive: "dataplane", Dockerfile: "build/dataplane/Dockerfile", Tags: []string{DataPlane}, Args: map[string]string{"BASE_IMAGE": Debian}, Run: true},
		{Archive: "dataplane-test", Dockerfile: "test/images/dataplane-test/Dockerfile", Tags: []string{DataPlaneTest},
			Args: map[string]string{"DATAPLANE_IMAGE": DataPlane}},
		// The sample's backend too.
		{Archive: "echo-basic", Dockerfile: "test/images/echo-basic/Dockerfile", Tags: withAliases(Echo, aliases), Args: static, Run: true},
		{Archive: "testbackend", Dockerfile: "test/images/testbackend/Dockerfile", Tags: []string{TestBackend}, Args: static},
		{Archive: "waf-standin", Dockerfile: "test/images/waf-standin/Dockerfile", Tags: []string{WAFStandIn}},
	}
}

// withAliases is name and the aliases of the same repository's last path
// element (".../echo-basic:v1.6.0" for ".../echo-basic:v1.5.1"), sorted,
// without duplicates.
func withAliases(name string, aliases []string) []string {
	tags := []string{name}
	for _, a := range aliases {
		if a != name && lastElement(a) == lastElement(name) && !slices.Contains(tags, a) {
			tags = append(tags, a)
		}
	}
	slices.Sort(tags[1:])
	return tags
}

// lastElement is an image reference's last path element, without tag or digest.
func lastElement(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	ref = ref[strings.LastIndexByte(ref, '/')+1:]
	ref, _, _ = strings.Cut(ref, ":")
	return ref
}
