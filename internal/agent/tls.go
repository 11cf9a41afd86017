package agent

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
)

// NewReloadingTLSConfig returns a TLS 1.3 server configuration whose
// certificate is read from certFile and keyFile (a mounted Secret) and read
// again when either file changes, so that a rotated certificate is served to
// new connections without a restart. The files are checked at each handshake
// (agents keep their connections, so handshakes are rare). A pair that fails
// to load (e.g. one file rotated before the other) leaves the previous
// certificate in use until the next handshake finds a good pair.
func NewReloadingTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	r := &reloader{certFile: certFile, keyFile: keyFile}
	if err := r.load(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: r.get,
	}, nil
}

// reloader holds the current certificate and the file states it came from.
type reloader struct {
	certFile, keyFile string

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp [2]fileStamp
}

// fileStamp identifies a version of a file without reading it. Secrets are
// updated by swapping a symlink to freshly written files, which changes what
// Stat (following links) sees.
type fileStamp struct {
	size    int64
	modTime int64 // UnixNano
}

func (r *reloader) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, name := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return out, fmt.Errorf("checking TLS file: %w", err)
		}
		out[i] = fileStamp{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
	}
	return out, nil
}

func (r *reloader) load() error {
	st, err := r.stamps()
	if err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("loading TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cert, r.stamp = &cert, st
	return nil
}

func (r *reloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	st, err := r.stamps()
	r.mu.Lock()
	current, stamp := r.cert, r.stamp
	r.mu.Unlock()
	if err != nil || st == stamp {
		return current, nil
	}
	if err := r.load(); err != nil {
		return current, nil //nolint:nilerr // keep serving the last good pair
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert, nil
}
