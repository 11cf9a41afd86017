// Package cluster runs a local Kubernetes control plane from real binaries:
// etcd and kube-apiserver (through controller-runtime's envtest), then
// kube-controller-manager and kube-scheduler as child processes. Together with
// package node (which plays the kubelet, container runtime and cloud load
// balancer) it makes a cluster that behaves like a real one: Deployments roll
// out, EndpointSlices follow pods, namespaces finish deleting.
//
// The control plane starts from an empty etcd every time; its state lives in
// Options.WorkDir and each component logs to a file under Options.LogDir.
package cluster
