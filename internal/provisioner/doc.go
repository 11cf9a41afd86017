// Package provisioner describes and applies the data plane of each accepted
// Gateway: a Deployment of NGINX with nginx-agent (plus the WAF enforcer and
// config manager when WAF is enabled), or a DaemonSet of the same pods, a
// Service with the listeners' ports, a ServiceAccount, the agent's ConfigMap
// and the CA the agent trusts, and, when the NginxProxy asks for them, a
// HorizontalPodAutoscaler of the Deployment and a PodDisruptionBudget of the
// pods. All are owned by the Gateway, so deleting the Gateway deletes them.
//
// Objects builds the objects from the effective NginxProxy and is pure
// (PatchedObjects also names the NginxProxy's patches it left out: those
// that change what the data plane's protection rests on); the pod template
// carries a seal of its spec for the Gateway (package podseal), taken after
// the patches, which the agent server checks, and opts out of mesh sidecar
// injection; Apply writes them with server-side apply, so drift is
// corrected on every reconcile, but never over an object the Gateway does
// not control, and an object the API server refuses (RefusedError) does
// not keep the others from being written; Remove
// deletes only objects the Gateway controls. Both read back existing
// objects as Kinds says: ServiceAccounts, ConfigMaps and Secrets as their
// metadata only.
package provisioner
