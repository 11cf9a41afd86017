// Package controller holds Gatewall's reconcilers: one per CRD it owns
// (NginxProxy, WAFGatewayBindingPolicy, and a PolicyReconciler for each kind
// of policy.Kinds) and the shared Gateway reconciler. Reconcilers are thin: they read from the cache, call the
// pure core (validation, graph, policy, nginx/config), and write status and
// objects. Each owns the status it writes and nothing else.
package controller
