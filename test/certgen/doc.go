// Package certgen makes certificate material of the shapes NGINX's OpenSSL
// may refuse, for the tests of Gatewall's PKI checks (internal/pki) and
// the property test that runs real `nginx -t` on what Gatewall accepts
// (internal/render): certificates with any of a few fixed keys (RSA of
// 1024, 1962, 1963 and 2048 bits, ECDSA P-224 to P-521, Ed25519), signed
// with any digest (MD5 and SHA-224 too, which Go does not sign with),
// chains in any order, and PEM text damaged the ways users' Secrets and
// ConfigMaps are (headers, junk and TRUSTED CERTIFICATE blocks, keys in
// tls.crt, encrypted keys, broken blocks, text around blocks).
//
// Keys are fixed files (keys/, made with `openssl genpkey`): generating
// RSA keys takes seconds, and Go's key generation ignores a seeded source.
// The choices of Draw come from a Source, so a seed gives the same shapes.
package certgen
