// Package localrun assembles Gatewall's local runtime: a single-node
// Kubernetes cluster made of real parts (package cluster: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler; package kubenode:
// containerd, the kubelet and kube-proxy in their own namespaces), a load
// balancer for LoadBalancer Services (package loadbalancer) and CoreDNS, with
// the images `make images` builds imported into the node. Deploy then
// installs Gatewall as `make deploy` does, or with the Helm chart
// (charts/gatewall, `helm upgrade --install` with bin/helm): the manager runs
// as a Pod from its image, with its ServiceAccount and only the RBAC of
// config/rbac, and provisions NGINX data planes that run the data-plane image.
// `make run-local`, the end-to-end tests and the conformance suite use it.
package localrun
