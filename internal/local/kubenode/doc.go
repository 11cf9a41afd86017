// Package kubenode runs a real Kubernetes node on this host: containerd (with
// runc and the CNI bridge plugin), the kubelet and kube-proxy (iptables mode),
// built from the registries like every other tool, registered with a local
// control plane (package cluster).
//
// The node lives in its own network and mount namespaces, held by a sleeping
// process, so that nothing it does changes the host:
//
//   - its network namespace has one veth uplink to the host (the node address
//     on its end, a host address on the other) and the pods' bridge; the host
//     routes the pod subnet through the uplink, so the host reaches every pod
//     IP; iptables rules, the bridge, ip_forward and the pods' namespaces are
//     all inside (so a Service's cluster IP, kube-proxy's rules, is reached
//     from inside only: Node.NetNS names the namespace for netns.Do);
//   - its mount namespace has its own /run, /var/lib and /var/log (tmpfs),
//     with containerd's, the kubelet's and CNI's state bound from the state
//     directory, and private copies of the six kernel settings the kubelet
//     insists on writing (kernel.panic, vm.overcommit_memory, ...), which are
//     global to the machine;
//   - every process of the node (the daemons, containerd's shims, the
//     containers) is in one cgroup tree, /gatewall-<name> in every hierarchy,
//     which is also the kubelet's cgroupRoot.
//
// Stop kills that cgroup tree and removes it: the namespaces, the uplink, its
// host route and the mounts go with their last process. A watchdog does the
// same if the process that started the node dies first, and Start removes
// what a crashed run with the same name left behind. Several nodes run at
// once when their names, link prefixes and networks differ.
//
// The API server is reached from the node (the kubelet, kube-proxy, and pods
// through the `kubernetes` Service) at the node address, where this package
// forwards to the API server's loopback address: nothing listens on a host
// address other than loopback.
package kubenode
