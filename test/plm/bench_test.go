package plm_test

import (
	"bytes"
	"testing"

	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

// BenchmarkFetch1MB measures one ~1 MB bundle from Want to Fetched: request,
// transfer, sha256, cache write with fsync and rename, OnChange; over plain
// HTTP and HTTPS to versitygw, and over mutual TLS through NGINX. "warm"
// reuses the kept-alive connection; "new-conn" changes the TLS settings
// (to an equivalent value) each time, forcing a new connection and, for
// mTLS, a full handshake with client certificate, as after a Secret rotation.
//
//	go test ./test/plm -run '^$' -bench Fetch1MB -benchtime 200x
func BenchmarkFetch1MB(b *testing.B) {
	dir := b.TempDir()
	serverCA, clientCA := newCA(b, "storage-ca"), newCA(b, "client-ca")
	backend := s3test.Start(b, "admin", adminSecret, nil)
	data, sha := randomBundle(b, 1<<20)
	backend.Put(nil, bucket, "bench.tgz", data)
	proxy := startNginxMTLS(b, backend.Addr(), serverFiles(b, serverCA, dir, "server"), writeFile(b, dir, "client-ca.crt", clientCA.CertPEM()))
	client := clientPair(b, clientCA)
	// A second versitygw serving TLS itself separates the cost of TLS from
	// the cost of NGINX's extra hop in the mTLS numbers.
	tlsDirect := s3test.Start(b, "admin", adminSecret, ptr(serverFiles(b, serverCA, dir, "direct")))
	tlsDirect.Put(serverCA.CertPEM(), bucket, "bench.tgz", data)
	https := plm.TLSSettings{CAPEM: serverCA.CertPEM()}
	httpsAlt := plm.TLSSettings{CAPEM: mtlsAltCA(serverCA.CertPEM())}

	mtls := plm.TLSSettings{CAPEM: serverCA.CertPEM(), ClientCertPEM: client.CertPEM, ClientKeyPEM: client.KeyPEM}
	mtlsAlt := mtls
	mtlsAlt.CAPEM = mtlsAltCA(serverCA.CertPEM())

	for _, tc := range []struct {
		name     string
		endpoint string
		tls      [2]plm.TLSSettings
		newConn  bool
	}{
		{"http/warm", backend.URL(), [2]plm.TLSSettings{{}, {SkipVerify: true}}, false},
		{"https/warm", tlsDirect.URL(), [2]plm.TLSSettings{https, httpsAlt}, false},
		{"mtls/warm", proxy.URL(), [2]plm.TLSSettings{mtls, mtlsAlt}, false},
		{"http/new-conn", backend.URL(), [2]plm.TLSSettings{{}, {SkipVerify: true}}, true},
		{"https/new-conn", tlsDirect.URL(), [2]plm.TLSSettings{https, httpsAlt}, true},
		{"mtls/new-conn", proxy.URL(), [2]plm.TLSSettings{mtls, mtlsAlt}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := newFetcher(b, tc.endpoint, b.TempDir(), nil)
			f.SetCredentials("admin", adminSecret)
			if err := f.SetTLS(tc.tls[0]); err != nil {
				b.Fatal(err)
			}
			f.run()
			refs := []plm.BundleRef{ref("bench.tgz", sha)}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f.Want(nil)
				if _, err := f.Prune(nil); err != nil {
					b.Fatal(err)
				}
				if tc.newConn {
					if err := f.SetTLS(tc.tls[(i+1)%2]); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				f.Want(refs)
				f.waitState(sha, plm.Fetched)
			}
			b.StopTimer()
			if s := f.Stats(); s.Fetches != b.N || s.FetchErrors != 0 {
				b.Fatalf("Stats = %+v; want %d clean fetches", s, b.N)
			}
		})
	}
}

// mtlsAltCA is the same CA bundle with a trailing newline: equivalent, but a
// change as far as SetTLS is concerned, so it builds a new transport.
func mtlsAltCA(pem []byte) []byte { return append(bytes.Clone(pem), '\n') }
