// Package issuer issues the small certificate authorities and key pairs
// Gatewall makes itself: the agent server's CA and serving certificate
// (the manager, when no Secret holds them yet), and the local runtime's
// CA, the kubelet's serving certificate and the API server's client
// certificate. Keys are ECDSA P-256, PKCS #8; certificates are PEM
// encoded. Unlike its parent package pki (pure: what users give is
// parsed and checked), it reads the clock and the random source, and
// WriteFiles writes files.
package issuer
