// Package pki is the one way certificate material a user gives Gatewall
// reaches NGINX: a listener's certificate and key (and the Gateway's
// backend client certificate), the CA bundles of client certificate
// validation and of BackendTLSPolicies. Nothing a tenant writes is handed
// to NGINX as it was written.
//
// Each piece is parsed, only the blocks NGINX uses are kept (the
// certificate chain and the one private key; the CA certificates), and
// they are encoded anew as canonical PEM: no headers, no text between
// blocks, no blocks of other kinds, no duplicates, the key as PKCS #8.
// What NGINX's OpenSSL would refuse when it loads the file is refused
// here, with a message naming the certificate and the reason, so that the
// object that brought it is refused alone and the shared NGINX
// configuration always loads:
//
//   - blocks that do not decode, certificates that do not parse (Go's
//     parser is the stricter of the two), encrypted keys (NGINX is given
//     no passphrase), keys that do not match the first certificate, key
//     types TLS in NGINX cannot use;
//   - what OpenSSL checks at its security level on every certificate of a
//     chain it loads (openssl.go): keys and signature digests weaker than
//     the level's bits.
//
// CA bundles are loaded by OpenSSL without those checks (they apply when a
// peer's chain is verified), so a bundle is refused only for what fails to
// load.
//
// The package is pure: no I/O, no clock (expired or not yet valid
// certificates load, and are accepted).
package pki
