package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/manifest"
)

// runLocal starts the local cluster, deploys Gatewall into it as `make
// deploy` does, applies the sample and prints its URL once it answers, then
// runs until Ctrl-C and stops everything it started.
func runLocal(args []string) error {
	fs := flag.NewFlagSet("gatewall-local run", flag.ContinueOnError)
	state := fs.String("state-dir", ".local", "Directory for the local cluster's state and logs.")
	samples := fs.String("samples", "config/samples", "Kustomization applied once Gatewall runs; empty applies nothing.")
	install := fs.String("install", "kustomize", "How Gatewall is installed: kustomize (config/default, as make deploy) or helm (charts/gatewall, with bin/helm).")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("the local runtime needs root (namespaces, cgroups, containerd); run it with sudo")
	}
	deployment, from, err := deploymentFor(*install, *samples != "")
	if err != nil {
		return err
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts))
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
	fmt.Println("Starting the local cluster: API server, controller-manager, scheduler, and a node (containerd, kubelet, kube-proxy)...")
	// The runtime gets its own context: on Ctrl-C it is stopped in order,
	// not torn down by the signal. A Ctrl-C while it starts stops it as soon
	// as it is up.
	type started struct {
		rt  *localrun.Runtime
		err error
	}
	up := make(chan started, 1)
	go func() {
		rt, err := localrun.Start(context.Background(), localrun.Options{
			Root: root, StateDir: stateDir, KubeconfigPath: kubeconfig,
			Prefix: "gwl", CIDR: "10.244.0.0/16", NodeName: "gatewall-node", Log: log.WithName("local"),
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
				fmt.Fprintln(os.Stderr, "gatewall-local: stopping:", err)
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping the node and the cluster...")
		if err := rt.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "gatewall-local: stopping:", err)
		}
	}()
	fmt.Printf("Cluster up (%s). Deploying Gatewall from %s with image %s...\n",
		time.Since(start).Round(time.Millisecond), from, images.Manager)
	if err := rt.Deploy(ctx, deployment); err != nil {
		return interrupted(ctx, err)
	}
	fmt.Printf("Gatewall is running (%s).\n", time.Since(start).Round(time.Millisecond))
	if *samples != "" {
		objs, err := manifest.Kustomize(*samples)
		if err != nil {
			return err
		}
		if err := manifest.Apply(ctx, rt.Client, "gatewall-local", objs); err != nil {
			return interrupted(ctx, err)
		}
		addr, err := sampleServed(ctx, rt, types.NamespacedName{Namespace: "default", Name: "gateway"}, "echo.example.com")
		if err != nil {
			return interrupted(ctx, err)
		}
		fmt.Printf("\nThe sample is served through NGINX at http://%s/ (route hostname echo.example.com), %s after the start:\n\n",
			addr, time.Since(start).Round(time.Millisecond))
		fmt.Printf("    curl -H 'Host: echo.example.com' http://%s/\n\n", addr)
	}
	fmt.Printf("Use the cluster with kubectl (bin/kubectl, or your own):\n\n    export KUBECONFIG=%s\n    kubectl get nodes\n    kubectl get pods -A\n    kubectl get gateways,httproutes -A\n\n", kubeconfig)
	fmt.Printf("Logs of the control plane and the node are under %s. Press Ctrl-C to stop everything.\n", stateDir)
	<-ctx.Done()
	return nil
}

// deploymentFor is how Gatewall is installed with the named installer, and
// what from. The chart makes no GatewayClass when the sample brings its own.
func deploymentFor(installer string, samples bool) (localrun.Deployment, string, error) {
	with, err := localrun.ParseInstaller(installer)
	if err != nil {
		return localrun.Deployment{}, "", err
	}
	if with == localrun.Kustomize {
		return localrun.Deployment{}, "config/default", nil
	}
	d := localrun.Deployment{With: with}
	if samples {
		d.Values = map[string]any{"nginxGateway": map[string]any{"createGatewayClass": false}}
	}
	return d, "charts/gatewall (helm upgrade --install)", nil
}

// sampleServed waits until the sample Gateway is Programmed and its address
// answers 200 for host, and returns that address.
func sampleServed(ctx context.Context, rt *localrun.Runtime, key types.NamespacedName, host string) (string, error) {
	fmt.Println("Waiting for the sample to answer through NGINX...")
	deadline := time.Now().Add(3 * time.Minute)
	client := &http.Client{Timeout: 2 * time.Second}
	last := "the Gateway is not programmed"
	for time.Now().Before(deadline) {
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(ctx, key, gw); err == nil {
			c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
			if c != nil && c.Status == metav1.ConditionTrue && len(gw.Status.Addresses) > 0 {
				addr := gw.Status.Addresses[0].Value
				code, err := get(ctx, client, addr, host)
				if err == nil && code == http.StatusOK {
					return addr, nil
				}
				last = fmt.Sprintf("http://%s/ answers %d (%v)", addr, code, err)
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("the sample Gateway %s did not answer 200 within 3 minutes (%s): see `kubectl describe gateway` and the logs in the state directory", key, last)
}

// get is the status code of GET http://addr/ with Host host.
func get(ctx context.Context, c *http.Client, addr, host string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
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
