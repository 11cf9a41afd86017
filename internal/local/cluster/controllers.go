package cluster

import (
	"context"
	"path/filepath"
)

// startControllers starts kube-controller-manager, then kube-scheduler, both
// authenticated as the admin user.
func (c *Cluster) startControllers(ctx context.Context) error {
	o := c.opts
	kubeconfig := c.adminKubeconfig()
	common := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// The API server has no request-header CA; looking it up only logs
		// errors. /healthz, all that is served, needs no authentication.
		"--authentication-skip-lookup=true",
	}
	kcm, err := startComponent(ctx, "kube-controller-manager", filepath.Join(o.BinDir, "kube-controller-manager"),
		append(common,
			"--controllers=*",
			"--use-service-account-credentials=false",
			"--service-cluster-ip-range="+o.ServiceCIDR,
			// Published into every namespace as kube-root-ca.crt, which the
			// pods' projected token volumes include.
			"--root-ca-file="+c.apiServerCA(),
			"--service-account-private-key-file="+filepath.Join(o.WorkDir, "apiserver", "sa-signer.key"),
		), o.LogDir, o.StartTimeout)
	if err != nil {
		return err
	}
	c.components = append(c.components, kcm)
	sched, err := startComponent(ctx, "kube-scheduler", filepath.Join(o.BinDir, "kube-scheduler"),
		common, o.LogDir, o.StartTimeout)
	if err != nil {
		return err
	}
	c.components = append(c.components, sched)
	return nil
}
