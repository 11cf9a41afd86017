// Package local tests the local runtime (internal/local/...) end to end: a
// real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) with the local node running pods as host processes.
// The tests need root and the binaries in bin/ (hack/kube.sh, hack/etcd.sh,
// hack/echo-basic.sh).
package local
