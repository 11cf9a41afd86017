package config

import (
	"github.com/gatewall/gatewall/internal/graph"
)

// backendVerifyDepth allows backend certificates issued through intermediates.
const backendVerifyDepth = "10"

// backendTLS returns the directives that make NGINX speak TLS to a rule's
// backends (prefix proxy or grpc) and verify them: the policy's hostname
// is sent as SNI and must be in the certificate, which must chain to the
// policy's CA certificates (or the system's). The Gateway's backend client
// certificate, if any, is presented.
func (b *builder) backendTLS(prefix string, t *graph.BackendTLS) []Directive {
	ca := graph.SystemCAsFile
	if !t.SystemCAs {
		ca = b.names.of(kindBackendCAFile, string(t.CAPEM))
		b.addCert(ca, t.CAPEM, append(append([]string(nil), t.Sources...), "BackendTLSPolicy "+t.Policy.String())...)
	}
	ds := []Directive{
		D(prefix+"_ssl_server_name", "on"),
		D(prefix+"_ssl_name", Quote(t.Hostname)),
		D(prefix+"_ssl_verify", "on"),
		D(prefix+"_ssl_verify_depth", backendVerifyDepth),
		D(prefix+"_ssl_trusted_certificate", ca),
	}
	// The Gateway's client certificate (spec.tls.backend), for backends
	// that verify their clients.
	if c := b.backendClientCert; c != nil {
		path := b.cert(c)
		ds = append(ds, D(prefix+"_ssl_certificate", path), D(prefix+"_ssl_certificate_key", path))
	}
	return ds
}

// passDirective is proxy_pass or grpc_pass to target, over TLS when the
// backends need it.
func passDirective(grpc, tls bool, target string) Directive {
	switch {
	case grpc && tls:
		return D("grpc_pass", "grpcs://"+target)
	case grpc:
		return D("grpc_pass", "grpc://"+target)
	case tls:
		return D("proxy_pass", "https://"+target)
	}
	return D("proxy_pass", "http://"+target)
}
