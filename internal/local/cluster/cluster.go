package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// Cluster is a running control plane.
type Cluster struct {
	opts       Options
	env        *envtest.Environment
	config     *rest.Config
	kubeletCA  *issuer.CA
	components []*component // started in order; stopped in reverse
	watchdog   *exec.Cmd
	stopOnce   sync.Once
	stopErr    error
	done       chan struct{}
}

// Start starts etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, installs the CRDs and writes the admin kubeconfig. The
// cluster stops when Stop is called or ctx is cancelled.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := prepareWorkDir(opts.WorkDir); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := os.MkdirAll(opts.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{opts: opts, done: make(chan struct{})}
	if err := c.startAPIServer(); err != nil {
		// kube-apiserver v1.37 sometimes dies at start, while CRDs are
		// installed (a nil pointer in kube-openapi's cached spec merger,
		// an upstream race); a second start from scratch succeeds.
		if c.env != nil {
			_ = c.env.Stop()
		}
		c.env = nil
		if perr := errors.Join(prepareWorkDir(opts.WorkDir), os.MkdirAll(opts.LogDir, 0o700)); perr != nil {
			return nil, fmt.Errorf("cluster: %w (after: %w)", perr, err)
		}
		if err2 := c.startAPIServer(); err2 != nil {
			_ = c.Stop() // the start's error is the one to report
			return nil, fmt.Errorf("%w (a first start failed too: %w)", err2, err)
		}
	}
	pids, err := processesOf(opts.WorkDir)
	if err == nil {
		c.watchdog, err = startWatchdog(pids)
	}
	if err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := c.startControllers(ctx); err != nil {
		_ = c.Stop()
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = c.Stop() // the context ended: no caller is left to tell
		case <-c.done:
		}
	}()
	return c, nil
}

// Config is an admin (system:masters) client configuration.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.config) }

// KubeletCA is the CA the API server trusts for kubelet serving certificates
// and whose client certificate it presents to kubelets; pass it to the node.
func (c *Cluster) KubeletCA() *issuer.CA { return c.kubeletCA }

// LogDir is where each component writes its log.
func (c *Cluster) LogDir() string { return c.opts.LogDir }

// Stop stops the components in reverse order of start. It is safe to call
// more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		defer close(c.done)
		var errs []error
		if c.watchdog != nil {
			_ = c.watchdog.Process.Kill()
		}
		for i := len(c.components) - 1; i >= 0; i-- {
			errs = append(errs, c.components[i].stop())
		}
		if c.env != nil {
			if err := c.env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd (logs in %s): %w", c.opts.LogDir, err))
			}
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

func (c *Cluster) logFile(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(c.opts.LogDir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("cluster: creating log for %s: %w", name, err)
	}
	return f, nil
}

// AddUser provisions a user authenticated by a client certificate (name is
// the user name, groups its groups) and returns its client configuration.
func (c *Cluster) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("cluster: provisioning user %s: %w", name, err)
	}
	return u.Config(), nil
}
