package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/manifest"
)

// runLocal runs Gatewall on the local runtime with the sample applied, until
// Ctrl-C, then stops everything it started.
func runLocal(args []string) error {
	fs := flag.NewFlagSet("gatewall local", flag.ContinueOnError)
	state := fs.String("state-dir", ".local", "Directory for the local cluster's state and logs.")
	samples := fs.String("samples", "config/samples", "Kustomization applied once the cluster runs; empty applies nothing.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("local: the local runtime needs root (it creates network and mount namespaces); run it with sudo")
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	stateDir, err := filepath.Abs(*state)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	ctx := interrupts(func() {
		fmt.Println("\nStopping: press Ctrl-C again to quit at once (the next run cleans up what is left behind).")
	})

	start := time.Now()
	fmt.Println("Starting the local cluster (API server, controller-manager, scheduler) and node...")
	// The runtime gets its own context: on Ctrl-C it is stopped in order
	// (manager, node, cluster), not torn down by the signal. A Ctrl-C while
	// it starts stops it as soon as it is up.
	type started struct {
		rt  *localrun.Runtime
		err error
	}
	up := make(chan started, 1)
	go func() {
		rt, err := localrun.Start(context.Background(), localrun.Options{
			Root: root, StateDir: stateDir, KubeconfigPath: kubeconfig,
			Prefix: "gwl", CIDR: "10.244.0.0/16", NodeName: "gatewall-node", Log: ctrl.Log.WithName("local"),
		})
		up <- started{rt, err}
	}()
	var rt *localrun.Runtime
	select {
	case s := <-up:
		rt, err = s.rt, s.err
	case <-ctx.Done():
		s := <-up
		if s.err == nil {
			fmt.Println("Stopping the node and the cluster...")
			if err := s.rt.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "local: stopping:", err)
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping Gatewall, the node and the cluster...")
		if err := rt.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "local: stopping:", err)
		}
	}()
	if err := rt.StartManager(rt.ManagerOptions()); err != nil {
		return err
	}
	fmt.Printf("Cluster and Gatewall are up (%s).\n", time.Since(start).Round(time.Millisecond))
	if *samples != "" {
		objs, err := manifest.Kustomize(*samples)
		if err != nil {
			return err
		}
		if err := manifest.Apply(ctx, rt.Client, "gatewall-local", objs); err != nil {
			return interrupted(ctx, err)
		}
		addr, err := sampleAddress(ctx, rt, types.NamespacedName{Namespace: "default", Name: "gateway"})
		if err != nil {
			return interrupted(ctx, err)
		}
		fmt.Printf("\nThe sample is served through NGINX at http://%s/ (route hostname echo.example.com):\n\n", addr)
		fmt.Printf("    curl -H 'Host: echo.example.com' http://%s/\n\n", addr)
	}
	fmt.Printf("Use the cluster with kubectl:\n\n    export KUBECONFIG=%s\n    kubectl get gateways,httproutes,pods -A\n\n", kubeconfig)
	fmt.Printf("Logs of the control plane and pods are under %s. Press Ctrl-C to stop everything.\n", stateDir)
	<-ctx.Done()
	return nil
}

// sampleAddress waits until the sample Gateway is Programmed and returns its address.
func sampleAddress(ctx context.Context, rt *localrun.Runtime, key types.NamespacedName) (string, error) {
	fmt.Println("Waiting for the sample Gateway to be programmed...")
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(ctx, key, gw); err == nil {
			c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
			if c != nil && c.Status == metav1.ConditionTrue && len(gw.Status.Addresses) > 0 {
				return gw.Status.Addresses[0].Value, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("the sample Gateway %s was not programmed within 3 minutes: see `kubectl describe gateway` and the logs in the state directory", key)
}

// interrupts returns a context cancelled by the first SIGINT or SIGTERM,
// after which onFirst runs. From then on these signals have their default
// effect again: a second Ctrl-C quits at once, whatever is still stopping.
func interrupts(onFirst func()) context.Context {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sigs
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		cancel()
		onFirst()
	}()
	return ctx
}

// interrupted is err, or nil when it is only that of a Ctrl-C.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
