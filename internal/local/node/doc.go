// Package node plays one Kubernetes node on this host: it registers a Node
// and keeps it Ready, runs the pods the scheduler binds to it, reports their
// status, serves their logs through the kubelet API, and acts as the cloud
// load balancer for LoadBalancer Services.
//
// Pods are real enough for a Gateway API controller and its data plane:
// every pod gets a network namespace and a non-loopback pod IP (package
// podnet), and every container runs as a host process chosen by an image
// table (Images): it runs in the pod's network namespace and in its own
// mount, PID and UTS namespaces, where each volumeMount is bind-mounted at
// its mountPath over the host's file system (there is no image file system),
// /proc shows only the container's processes, and a directory named by the
// 64-hex container ID is mounted so that agents find their container ID in
// /proc/self/mountinfo. Secrets, ConfigMaps, downward API and projected
// service-account tokens are rendered to files like the kubelet does;
// probes, restart policy with back-off, graceful deletion and pod status
// follow the kubelet's behaviour.
package node
