// Package controller holds Gatewall's reconcilers: one per CRD it owns
// (NginxProxy, a PolicyReconciler for each kind of policy.Kinds, among
// them WAFGatewayBindingPolicy, and a FilterReconciler for each kind of
// graph.ExtensionFilterKinds, AuthenticationFilter and SnippetsFilter) and the shared Gateway
// reconciler, with their watches. Reconcilers are thin: they read a snapshot from the cache
// (package snapshot), call the pure core (package translate), hand the
// configuration to the data plane (package dataplane) and write statuses
// (package statuswrite) and events (package userevents). Every status that
// depends on a Gateway comes from the Gateway reconciler's translation of
// it, handed to statuswrite's writers by its status job (route parents and
// policies' ancestor entries included); a PolicyReconciler hands only the
// entries no Gateway decides (targets not found or of a kind the policy
// cannot have).
//
// The manager's cache holds only the metadata of Secrets, ConfigMaps and
// ServiceAccounts (every tenant's, in every namespace): reconcilers watch
// them with builder.OnlyMetadata and read the content of the referenced
// ones through snapshot.Referenced, never through the cached client (the
// manager's cache refuses such reads).
package controller
