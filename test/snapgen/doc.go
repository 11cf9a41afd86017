// Package snapgen generates snapshots of cluster objects for Gatewall's
// fuzz and property tests: Gateways with their listeners, HTTPRoutes and
// GRPCRoutes with every match and filter kind, Services and their
// EndpointSlices, certificates, ReferenceGrants, BackendTLSPolicies,
// ListenerSets, and Gatewall's own NginxProxy, ProxySettingsPolicy and
// WAFGatewayBindingPolicy with the PLM objects and bundles they refer to.
//
// Every decision comes from a Source: fuzz bytes (the fuzzer mutates the
// structure, not the text of manifests), a seeded random generator
// (property runs), or a replayed list of recorded choices (shrinking a
// failure to a minimal reproduction). Choice 0 is always the simplest
// option, so a source that runs out, or a choice list shrunk towards
// zeros, gives a smaller snapshot.
//
// Most values are ones the API server accepts; each pool also holds a few
// that Gatewall must refuse, so refusals are exercised too. The package is
// pure: the same choices give the same snapshot.
package snapgen
