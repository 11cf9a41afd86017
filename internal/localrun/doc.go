// Package localrun assembles Gatewall's local runtime: a local cluster (the
// API server with the real kube-controller-manager and kube-scheduler), a
// played node that runs each pod's containers as host processes — the
// data-plane image as build/dataplane/entrypoint.sh with the real NGINX and
// nginx-agent — and Gatewall's manager serving the agents. `make run-local`
// and the end-to-end tests use it; it exercises the same provisioner, agent
// server and reconcilers as a cluster does.
package localrun
