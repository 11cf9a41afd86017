package localrun

import (
	"path/filepath"

	"github.com/gatewall/gatewall/internal/local/node"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// images maps the images the local node can run to host programs.
func images(root string) node.Images {
	bin := filepath.Join(root, "bin")
	imgs := node.DefaultImages(bin)
	imgs[node.Repository(provisioner.DefaultImages.NGINX)] = node.Runner{
		Command: []string{filepath.Join(root, "build", "dataplane", "entrypoint.sh")},
		Env: []string{
			"PATH=" + bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"GATEWALL_NGINX_AGENT=" + filepath.Join(bin, "nginx-agent"),
			"GATEWALL_NGINX_BOOTSTRAP=" + filepath.Join(root, "build", "dataplane", "nginx-bootstrap.conf"),
		},
		Hint: "build/dataplane/entrypoint.sh and bin/nginx-agent (hack/nginx-agent.sh) are needed",
	}
	// F5's WAF enforcer and config manager cannot run here. These stand-ins
	// only keep the pod's containers running; NGINX loads the App Protect
	// test double (test/apstub), which enforces a marker rule itself.
	for _, img := range []string{provisioner.DefaultImages.WAFEnforcer, provisioner.DefaultImages.WAFConfigMgr} {
		imgs[node.Repository(img)] = node.Runner{
			Command: standIn,
			Hint:    "a stand-in: F5's WAF containers cannot run on this machine",
		}
	}
	// The conformance suite's base manifests run CoreDNS for UDPRoute tests,
	// and wait for every pod to be Ready. Gatewall has no UDPRoute, so a
	// stand-in that stays running is enough; it answers nothing.
	imgs[coreDNSImage] = node.Runner{
		Command: standIn,
		Hint:    "a stand-in: CoreDNS serves only UDPRoute tests, which Gatewall does not claim",
	}
	return imgs
}

const coreDNSImage = "registry.k8s.io/coredns/coredns"

// standIn keeps a container running whatever arguments its pod gives it.
var standIn = []string{"/bin/sh", "-c", "exec sleep infinity", "stand-in"}

func defaultImages() provisioner.Images { return provisioner.DefaultImages }
