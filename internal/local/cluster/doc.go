// Package cluster runs a local Kubernetes control plane from real binaries:
// etcd and kube-apiserver (through controller-runtime's envtest), then
// kube-controller-manager and kube-scheduler as child processes. With a node
// (package kubenode: the kubelet, containerd, kube-proxy) it is a cluster:
// the API server publishes itself to pods at Options.AdvertiseAddress (its
// serving certificate names that address and the `kubernetes` Service),
// authorizes kubelets as nodes (Node,RBAC and NodeRestriction), and reaches
// kubelets with a client certificate from KubeletCA.
//
// The control plane starts from an empty etcd every time; its state lives in
// Options.WorkDir and each component logs to a file under Options.LogDir.
package cluster
