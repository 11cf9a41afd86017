// Package validation re-checks, in Go, every rule the API server enforces on
// Gatewall's own resources (their CRD schemas and CEL rules), plus the checks a
// value needs before it may reach nginx.conf. The API server's rules can be
// bypassed (an older CRD, a direct etcd write), so controllers call these
// functions on everything they read.
//
// Messages match the API server's where a rule exists in both places, so users
// see the same words whichever layer stopped them.
//
// The package is pure: no I/O, no clients, no logging.
package validation
