package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeTarget is the container instance a probe checks.
type probeTarget struct {
	podIP     string
	container *corev1.Container
	pid       int      // host PID of the container's PID 1, for exec probes
	env       []string // the container's environment, for exec probes
	nsenter   string
}

// runProbe probes every periodSeconds after initialDelaySeconds and calls
// report with the probe's result each time it changes, applying the success
// and failure thresholds; detail is the last failure. The first report is
// the first result that crosses a threshold. It returns when ctx ends.
func runProbe(ctx context.Context, p *corev1.Probe, t probeTarget, report func(ok bool, detail string)) {
	period := seconds(p.PeriodSeconds, 10)
	timeout := seconds(p.TimeoutSeconds, 1)
	successThreshold, failureThreshold := orDefault(p.SuccessThreshold, 1), orDefault(p.FailureThreshold, 3)
	if !sleepCtx(ctx, seconds(p.InitialDelaySeconds, 0)) {
		return
	}
	var last *bool
	successes, failures := int32(0), int32(0)
	detail := ""
	for {
		err := probeOnce(ctx, p, t, timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			successes, failures = successes+1, 0
		} else {
			successes, failures, detail = 0, failures+1, err.Error()
		}
		var result *bool
		switch {
		case successes >= successThreshold:
			result = ptrTo(true)
		case failures >= failureThreshold:
			result = ptrTo(false)
		}
		if result != nil && (last == nil || *last != *result) {
			last = result
			report(*result, detail)
		}
		if !sleepCtx(ctx, period) {
			return
		}
	}
}

// probeOnce runs one probe; nil means success.
func probeOnce(ctx context.Context, p *corev1.Probe, t probeTarget, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch h := p.ProbeHandler; {
	case h.HTTPGet != nil:
		return probeHTTP(ctx, h.HTTPGet, t)
	case h.TCPSocket != nil:
		port, err := resolvePort(h.TCPSocket.Port, t.container)
		if err != nil {
			return err
		}
		return dialTCP(ctx, hostOr(h.TCPSocket.Host, t.podIP), port)
	case h.Exec != nil:
		return probeExec(ctx, h.Exec.Command, t)
	case h.GRPC != nil:
		return probeGRPC(ctx, h.GRPC, t)
	}
	return fmt.Errorf("probe has no handler")
}

func probeHTTP(ctx context.Context, g *corev1.HTTPGetAction, t probeTarget) error {
	port, err := resolvePort(g.Port, t.container)
	if err != nil {
		return err
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(hostOr(g.Host, t.podIP), strconv.Itoa(port)), g.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	for _, h := range g.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	client := &http.Client{
		// Like the kubelet: HTTPS probes do not verify, redirects count as success.
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}, //nolint:gosec
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

func dialTCP(ctx context.Context, host string, port int) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return c.Close()
}

// probeExec runs the command inside the container's namespaces.
func probeExec(ctx context.Context, command []string, t probeTarget) error {
	out, err := execInContainer(ctx, t.nsenter, t.pid, t.env, command)
	if err != nil {
		return fmt.Errorf("exec probe %v: %w: %s", command, err, out)
	}
	return nil
}

// execInContainer runs command in the mount, UTS, network and PID
// namespaces of the container whose PID 1 is pid, with its environment.
func execInContainer(ctx context.Context, nsenter string, pid int, env, command []string) ([]byte, error) {
	args := append([]string{"--target", strconv.Itoa(pid), "--mount", "--uts", "--net", "--pid", "--wd", "--"}, command...)
	cmd := exec.CommandContext(ctx, nsenter, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// nsenter forks to enter the PID namespace; kill the whole group on timeout.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd.CombinedOutput()
}

func probeGRPC(ctx context.Context, g *corev1.GRPCAction, t probeTarget) error {
	conn, err := grpc.NewClient(net.JoinHostPort(t.podIP, strconv.Itoa(int(g.Port))),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("gRPC probe: status %s", resp.GetStatus())
	}
	return nil
}

// resolvePort resolves a probe port, which may name a container port.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}

// waitForPorts reports once every declared TCP container port accepts a
// connection: readiness for containers without a readiness probe, so that a
// pod is not Ready (and not an endpoint) before it can serve.
func waitForPorts(ctx context.Context, t probeTarget, report func(ok bool, detail string)) {
	for _, cp := range t.container.Ports {
		if cp.Protocol != "" && cp.Protocol != corev1.ProtocolTCP {
			continue
		}
		for dialTCP(ctx, t.podIP, int(cp.ContainerPort)) != nil {
			if !sleepCtx(ctx, 100*time.Millisecond) {
				return
			}
		}
	}
	report(true, "")
}

func hostOr(host, podIP string) string {
	if host != "" {
		return host
	}
	return podIP
}

func seconds(v int32, def int32) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

func orDefault(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}

func ptrTo[T any](v T) *T { return &v }

// sleepCtx sleeps for d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
