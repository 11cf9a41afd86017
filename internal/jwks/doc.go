// Package jwks is JSON Web Token authentication as Gatewall's data plane
// does it on NGINX OSS: the key sets that verify tokens, the decision rules
// of an AuthenticationFilter of type JWT, and a reference of those rules in
// Go.
//
// NGINX OSS has no JWT module (NGINX Plus's auth_jwt). Gatewall's own Lua
// (nginx/config/lua/gatewall/jwt.lua) verifies tokens in each request's
// access phase, with the libcrypto NGINX already loads. Lua never parses
// what users wrote: the manager turns it into data the Lua reads.
//
//   - Keys: a JSON Web Key Set (RFC 7517), from a Secret (source File) or
//     fetched over HTTPS by the data plane's endpoints client (source
//     Remote), is checked here (Parse) and written anew as a Set: each
//     usable key's public key as DER (SubjectPublicKeyInfo, which
//     OpenSSL's d2i_PUBKEY reads) or its secret, and the algorithms it may
//     verify, decided here once: an RSA key verifies RS* and PS*, an EC key
//     the ES* of its curve, a secret the HS* its length allows, and a
//     key's declared alg narrows that. What is refused (RSA under 2048
//     bits, other curves, short secrets, keys for encryption) is named.
//   - Policy: what one filter asks of a token (its realm, leeway, keys or
//     key set, the claims it requires and those it forwards), the JSON the
//     Lua reads from a data-plane file.
//   - Decide: the decision rules of jwt.lua, in Go. It is the reference
//     the fuzz tests hold to (no token the test did not sign is accepted)
//     and that tokens replayed through a real NGINX must agree with
//     (test/auth).
//
// It is pure: values and functions of them; Decide is given the time.
package jwks
