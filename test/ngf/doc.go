// Package ngf holds Gatewall's own scenarios of the shapes NGINX Gateway
// Fabric's published examples use (scenarios/*.yaml: one per example, the
// same kinds and fields used the same way, with this project's own names
// and values; none of NGF's manifests or prose), and what a cluster or
// cert-manager would add to them: EndpointSlices for offline rendering,
// and the Secrets NGF's guides have cert-manager issue.
//
// The offline test renders each scenario with the manager's pipeline and
// checks it with real `nginx -t` and the statuses its guide implies;
// test/e2e applies the scenarios whose behaviour needs a cluster.
package ngf
