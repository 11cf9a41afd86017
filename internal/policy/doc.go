// Package policy attaches Gatewall's policies (GEP-713, every kind of
// Kinds) to one Gateway's graph: which policies target the Gateway and its routes, their
// order (creation time, then namespace/name), conflicts between policies on
// the same target, and the effective settings each policy kind renders, with
// the outcome every policy gets for this Gateway as an ancestor. One file per
// policy kind.
//
// The package is pure: the same graph and policies give the same result.
package policy
