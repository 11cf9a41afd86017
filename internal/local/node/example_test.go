package node_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/gatewall/gatewall/internal/local/cluster"
	"github.com/gatewall/gatewall/internal/local/node"
)

// Example wires a local cluster and node the way `make run-local` can:
// control plane, then the node with the data-plane image in its image table;
// both stop on Ctrl-C (in reverse order).
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, _ := filepath.Abs(".")
	bin := filepath.Join(root, "bin")

	c, err := cluster.Start(ctx, cluster.Options{
		BinDir:         bin,
		WorkDir:        filepath.Join(root, ".local", "cluster"),
		KubeconfigPath: filepath.Join(root, ".local", "kubeconfig"),
		CRDDirs:        []string{filepath.Join(root, "config", "crd", "bases")},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()

	images := node.DefaultImages(bin)
	// The data-plane container: the entrypoint starts NGINX, then execs
	// nginx-agent; both are found on the PATH given here.
	images["ghcr.io/gatewall/nginx"] = node.Runner{
		Command: []string{filepath.Join(root, "build", "dataplane", "entrypoint.sh")},
		Env:     []string{"PATH=" + bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Hint:    "build/dataplane/entrypoint.sh is missing",
	}
	n, err := node.Start(ctx, c.Config(), node.Options{
		StateDir:  filepath.Join(root, ".local", "node"),
		Images:    images,
		KubeletCA: c.KubeletCA(),
		// The manager runs on the host, listening on 127.0.0.1:8443; data-plane
		// pods reach it as gatewall-controller:8443.
		HostForwards: []node.HostForward{{Port: 8443, Target: "127.0.0.1:8443"}},
		NodeAliases:  []string{"gatewall-controller"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Stop()
	<-ctx.Done()
}
