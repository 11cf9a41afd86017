// Package pki issues the small certificate authorities and key pairs the local
// runtime needs: the CA the API server trusts for the "kubelet" it talks to,
// the kubelet's serving certificate and the API server's client certificate
// for it. Keys are ECDSA P-256; certificates are PEM encoded.
package pki
