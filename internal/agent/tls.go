package agent

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
)

// NewReloadingTLSConfig returns a TLS 1.3 server configuration whose
// certificate is read from certFile and keyFile (a mounted Secret) and read
// again when either file changes, so that a rotated certificate is served to
// new connections without a restart (see KeyPairFiles). The files must hold
// a good pair now.
func NewReloadingTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	k := NewKeyPairFiles(certFile, keyFile)
	if _, err := k.Certificate(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return k.Certificate() },
	}, nil
}

// KeyPairFiles is a certificate and key read from files, typically a
// mounted Secret, and read again when either file changes. The files are
// checked at each call (agents keep their connections, so handshakes are
// rare). A pair that fails to load (e.g. one file rotated before the other)
// leaves the previous one in use until a later call finds a good pair.
type KeyPairFiles struct {
	certFile, keyFile string

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp [2]fileStamp
}

// NewKeyPairFiles returns the pair in certFile and keyFile; nothing is read
// until Certificate is called, so the files need not exist yet.
func NewKeyPairFiles(certFile, keyFile string) *KeyPairFiles {
	return &KeyPairFiles{certFile: certFile, keyFile: keyFile}
}

// fileStamp identifies a version of a file without reading it. Secrets are
// updated by swapping a symlink to freshly written files, which changes what
// Stat (following links) sees.
type fileStamp struct {
	size    int64
	modTime int64 // UnixNano
}

func (k *KeyPairFiles) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, name := range []string{k.certFile, k.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return out, fmt.Errorf("checking TLS file: %w", err)
		}
		out[i] = fileStamp{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
	}
	return out, nil
}

// Certificate returns the current pair, loading the files again when they
// changed. It fails only when no good pair was ever loaded.
func (k *KeyPairFiles) Certificate() (*tls.Certificate, error) {
	st, statErr := k.stamps()
	k.mu.Lock()
	defer k.mu.Unlock()
	if statErr == nil && (k.cert == nil || st != k.stamp) {
		cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
		switch {
		case err == nil:
			k.cert, k.stamp = &cert, st
		case k.cert == nil:
			return nil, fmt.Errorf("loading TLS certificate %s and key %s: %w", k.certFile, k.keyFile, err)
		}
	}
	if k.cert == nil {
		return nil, errors.Join(errors.New("no TLS certificate loaded"), statErr)
	}
	return k.cert, nil
}
