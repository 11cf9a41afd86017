// Package controller holds Gatewall's reconcilers: one per CRD it owns
// (NginxProxy, and a PolicyReconciler for each kind of policy.Kinds, among
// them WAFGatewayBindingPolicy) and the shared Gateway reconciler.
// Reconcilers are thin: they read from the cache, call the pure core (validation, graph, policy, nginx/config), and write status and
// objects. Each owns the status it writes and nothing else.
//
// The manager's cache holds only the metadata of Secrets, ConfigMaps and
// ServiceAccounts (every tenant's, in every namespace): reconcilers watch
// them with builder.OnlyMetadata and read the content of the referenced
// ones through snapshot.Referenced, never through the cached client (the manager's
// cache refuses such reads).
package controller
