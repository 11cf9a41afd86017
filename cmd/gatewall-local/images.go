package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/localrun"
)

// runImages builds every image of the local runtime into bin/images (see
// package images), with the names the conformance suite's manifests and the
// samples give them as extra tags.
func runImages(args []string) error {
	fs := flag.NewFlagSet("gatewall-local images", flag.ContinueOnError)
	out := fs.String("output-dir", "bin/images", "Directory for the image archives the local node imports.")
	runOnly := fs.Bool("run-only", false, "Build only what make run-local needs (the product's images, the runtime's, the sample's backend), not the tests'.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	conformance, err := localrun.ModuleDir("sigs.k8s.io/gateway-api/conformance")
	if err != nil {
		return err
	}
	aliases, err := images.ManifestImages(filepath.Join(conformance, "base"), filepath.Join(conformance, "tests"),
		filepath.Join(root, "config", "samples"))
	if err != nil {
		return err
	}
	return images.Build(context.Background(), images.BuildOptions{
		Root: root, OutDir: *out, Aliases: aliases, Log: os.Stdout, RunOnly: *runOnly,
	})
}
