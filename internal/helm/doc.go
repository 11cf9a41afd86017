// Package helm runs the helm binary (Helm v3, built from the Go module proxy
// by hack/helm.sh into bin/) on a chart directory: it renders a release as
// `helm template` does, into unstructured objects, and installs, upgrades
// and uninstalls releases on a cluster. The local runtime installs
// charts/gatewall with it (`make run-local INSTALL=helm`, the end-to-end
// tests), and test/envtest compares its rendering with config/default's.
//
// It runs helm rather than linking Helm's SDK: what users run is the CLI,
// and the manager's module stays free of Helm's dependencies.
package helm
