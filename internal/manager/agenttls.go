package manager

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/agent"
)

// agentTLSPoll is how often the agent TLS Secret is read from the API
// server while it is not mounted.
const agentTLSPoll = 30 * time.Second

// agentTLS is the agent server's certificate and the CA the agents trust,
// from the agent TLS Secret. Where the Secret is mounted (dir), they come
// from its files, which the kubelet updates when the Secret changes, and are
// read again when they change. Until the files exist (the Secret was just
// created, and the kubelet has not written the volume yet), and where the
// Secret is not mounted (a manager outside the cluster, the local runtime),
// they come from the Secret as read from the API server, polled. Nothing is
// written to disk: the manager's root filesystem is read-only, and a copy of
// the private key would outlive the manager.
type agentTLS struct {
	dir   string
	files *agent.KeyPairFiles // the mounted pair; nil without dir

	mu     sync.Mutex
	cert   *tls.Certificate // from the API server
	ca     []byte
	loaded []byte // what cert and ca were parsed from
}

// newAgentTLS serves s until the mounted files in dir ("" for none) exist.
func newAgentTLS(dir string, s *corev1.Secret) (*agentTLS, error) {
	a := &agentTLS{dir: dir}
	if dir != "" {
		a.files = agent.NewKeyPairFiles(filepath.Join(dir, agentTLSCert), filepath.Join(dir, agentTLSKey))
	}
	if err := a.load(s); err != nil {
		return nil, err
	}
	return a, nil
}

// load takes the Secret's pair and CA as the API server's copy.
func (a *agentTLS) load(s *corev1.Secret) error {
	for _, k := range []string{agentTLSCert, agentTLSKey, agentTLSCA} {
		if len(s.Data[k]) == 0 {
			return fmt.Errorf("agent TLS Secret %s/%s has no %s", s.Namespace, s.Name, k)
		}
	}
	raw := bytes.Join([][]byte{s.Data[agentTLSCert], s.Data[agentTLSKey], s.Data[agentTLSCA]}, []byte{0})
	a.mu.Lock()
	defer a.mu.Unlock()
	if bytes.Equal(raw, a.loaded) {
		return nil
	}
	cert, err := tls.X509KeyPair(s.Data[agentTLSCert], s.Data[agentTLSKey])
	if err != nil {
		return fmt.Errorf("agent TLS Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	a.cert, a.ca, a.loaded = &cert, bytes.Clone(s.Data[agentTLSCA]), raw
	return nil
}

// mounted says whether the Secret's files are in dir.
func (a *agentTLS) mounted() bool {
	if a.dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(a.dir, agentTLSCert))
	return err == nil
}

// GetCertificate is the server's tls.Config.GetCertificate.
func (a *agentTLS) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if a.mounted() {
		if c, err := a.files.Certificate(); err == nil {
			return c, nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cert, nil
}

// CA is the CA bundle the agents verify the server with.
func (a *agentTLS) CA() ([]byte, error) {
	if a.mounted() {
		if ca, err := os.ReadFile(filepath.Join(a.dir, agentTLSCA)); err == nil && len(ca) > 0 {
			return ca, nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ca) == 0 {
		return nil, errors.New("no agent CA loaded")
	}
	return a.ca, nil
}

// TLSConfig is the agent server's TLS configuration.
func (a *agentTLS) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: a.GetCertificate}
}

// poll reads the Secret from the API server while it is not mounted, so
// that a rotated certificate is served and a rotated CA handed out without
// a restart; a deleted Secret is made again for names, with sealKey, the
// pod seal key the manager seals and checks data-plane pods with (a new
// key needs a restart: sealkey.go). It returns when ctx ends.
func (a *agentTLS) poll(ctx context.Context, c client.Client, key types.NamespacedName, names []string, controller string, sealKey []byte, log logr.Logger) {
	tick := time.NewTicker(agentTLSPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if a.mounted() {
			continue
		}
		s, err := ensureAgentTLS(ctx, c, key, names, controller, sealKey)
		if err == nil {
			err = a.load(s)
		}
		if err != nil {
			log.Error(err, "reading the agent TLS Secret")
		}
	}
}
