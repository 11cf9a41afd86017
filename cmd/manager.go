package main

import (
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/manager"
)

// runManager parses the manager's flags and runs it until SIGTERM or SIGINT.
func runManager(args []string) error {
	fs := flag.NewFlagSet("gatewall", flag.ContinueOnError)
	opts := manager.Options{}
	manager.BindFlags(fs, &opts)
	qps := fs.Float64("kube-api-qps", 50,
		"Requests per second to the API server (every reconcile applies the Gateway's data-plane objects and writes statuses).")
	burst := fs.Int("kube-api-burst", 100, "Burst of requests to the API server above --kube-api-qps.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	setup := ctrl.Log.WithName("setup")
	if limit, err := manager.SetMemoryLimit("/sys/fs/cgroup"); err != nil {
		setup.Error(err, "reading the container's memory limit; the Go runtime keeps no soft limit")
	} else if limit > 0 {
		setup.Info("Go runtime soft memory limit set to 90% of the container's", "bytes", limit)
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	setup.Info("starting manager", "controllerName", opts.ControllerName,
		"gatewayClass", opts.GatewayClassName, "namespace", opts.Namespace)
	return mgr.Start(ctrl.SetupSignalHandler())
}
