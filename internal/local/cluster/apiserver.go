package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// adminUser is the identity of the admin kubeconfig and of the controllers.
func adminUser() envtest.User {
	return envtest.User{Name: "gatewall-local-admin", Groups: []string{"system:masters"}}
}

// startAPIServer starts etcd and kube-apiserver through envtest, configured
// like a cluster's rather than a test's: ServiceAccount admission on (pods get
// their token volumes), the kubelet reached over verified TLS, and the
// Service range shared with kube-controller-manager.
func (c *Cluster) startAPIServer() error {
	o := c.opts
	kubeletCA, err := issuer.NewCA("gatewall-local-kubelet-ca")
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.kubeletCA = kubeletCA
	pkiDir := filepath.Join(o.WorkDir, "pki")
	caPath := filepath.Join(pkiDir, "kubelet-ca.crt")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.WriteFile(caPath, kubeletCA.CertPEM(), 0o600); err != nil {
		return fmt.Errorf("cluster: writing kubelet CA: %w", err)
	}
	client, err := kubeletCA.IssueClient("kube-apiserver-kubelet-client", []string{"system:masters"})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	clientCert, clientKey, err := client.WriteFiles(pkiDir, "apiserver-kubelet-client")
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}

	apiLog, err := c.logFile("kube-apiserver")
	if err != nil {
		return err
	}
	etcdLog, err := c.logFile("etcd")
	if err != nil {
		return err
	}
	// The processes hold their own descriptors; ours are not needed after start.
	defer apiLog.Close()
	defer etcdLog.Close()

	api := &envtest.APIServer{
		CertDir: filepath.Join(o.WorkDir, "apiserver"),
		Out:     apiLog, Err: apiLog,
		SecureServing: envtest.SecureServing{ListenAddr: envtest.ListenAddr{Address: "127.0.0.1"}},
	}
	if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if api.SecureServing.CA, err = writeServingCerts(api.CertDir, o); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	args := api.Configure()
	args.Disable("disable-admission-plugins")
	args.Set("service-cluster-ip-range", o.ServiceCIDR)
	args.Set("advertise-address", o.AdvertiseAddress)
	// Kubelets are authorized as nodes, and may change only their own Node
	// and its pods, as on any cluster.
	args.Set("authorization-mode", "Node,RBAC")
	args.Set("enable-admission-plugins", "NodeRestriction")
	args.Set("kubelet-certificate-authority", caPath)
	args.Set("kubelet-client-certificate", clientCert)
	args.Set("kubelet-client-key", clientKey)
	args.Set("kubelet-preferred-address-types", "InternalIP")
	args.Set("kubelet-timeout", (5 * time.Second).String())

	etcdDir := filepath.Join(o.WorkDir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.env = &envtest.Environment{
		BinaryAssetsDirectory: o.BinDir,
		CRDDirectoryPaths:     o.CRDDirs,
		ErrorIfCRDPathMissing: true,
		ControlPlane: envtest.ControlPlane{
			APIServer: api,
			Etcd:      &envtest.Etcd{DataDir: etcdDir, Out: etcdLog, Err: etcdLog},
		},
		ControlPlaneStartTimeout: o.StartTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if _, err := c.env.Start(); err != nil {
		return fmt.Errorf("cluster: starting etcd and kube-apiserver (logs %s, %s): %w",
			etcdLog.Name(), apiLog.Name(), err)
	}
	admin, err := c.env.AddUser(adminUser(), nil)
	if err != nil {
		return fmt.Errorf("cluster: provisioning the admin user: %w", err)
	}
	c.config = admin.Config()
	c.config.QPS, c.config.Burst = 200, 400
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("cluster: rendering the admin kubeconfig: %w", err)
	}
	paths := []string{c.adminKubeconfig()}
	if o.KubeconfigPath != "" {
		paths = append(paths, o.KubeconfigPath)
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		if err := os.WriteFile(p, kubeconfig, 0o600); err != nil {
			return fmt.Errorf("cluster: writing kubeconfig: %w", err)
		}
	}
	return os.WriteFile(c.apiServerCA(), c.config.CAData, 0o600)
}

func (c *Cluster) adminKubeconfig() string { return filepath.Join(c.opts.WorkDir, "admin.kubeconfig") }
func (c *Cluster) apiServerCA() string {
	return filepath.Join(c.opts.WorkDir, "pki", "apiserver-ca.crt")
}
