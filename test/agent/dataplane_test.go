package agente2e

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/test/testenv"
)

// A data plane here is what the data-plane container runs: the real
// build/dataplane/entrypoint.sh starting Debian's NGINX and the real
// nginx-agent, with the nginx-agent.conf that agent.AgentConfig writes.
//
// Each start is one "container": a private mount and PID namespace
// (unshare) in which
//   - the test's own directory is /etc/nginx (the emptyDir: it survives
//     restarts of the data plane, as in a pod), another one /var/log/nginx;
//   - tmpfs are /run (so /var/run/nginx) and /var/cache, for pid and temp
//     files, and /run/nginx-agent is the agent's lib dir;
//   - NGINX and the agent see only each other: the agent runs `nginx -t` on
//     /etc/nginx/nginx.conf and finds the only NGINX master there is;
//   - a directory named by 64 hex digits is bind-mounted onto itself: these
//     machines have /.dockerenv, so the agent takes its resource ID from a
//     container ID in /proc/self/mountinfo, and refuses to connect without one.
//     A new one per start makes each start a new container to the server.
// NGINX listens on a loopback address of its own in the host's network.

// dataPlaneOptions describe one data-plane pod.
type dataPlaneOptions struct {
	pod     types.NamespacedName
	gateway agent.Key // what the pod serves (authentication)
	// labelGateway is the Gateway the agent's labels name; gateway when empty.
	labelGateway agent.Key
	// token the agent presents; "token-<pod>" (admitted) when empty.
	token string
	// logLevel of the agent; debug (for the failure output) when empty.
	logLevel string
	// metrics turns on the agent's metrics, served on a free port of the
	// data plane's loopback address (dataPlane.metricsPort).
	metrics bool
}

type dataPlane struct {
	t      testing.TB
	opts   dataPlaneOptions
	dir    string
	ip     string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	tokens int // token versions written
	// metricsPort serves the metrics when opts.metrics is set.
	metricsPort int
}

// writeToken writes token the way the kubelet updates a projected volume:
// into a new directory that the symlink ..data is swapped to, the file
// being the symlink token -> ..data/token. It returns the token's path.
func (d *dataPlane) writeToken(token string) string {
	d.t.Helper()
	vol := filepath.Join(d.dir, "agent", "secret")
	d.tokens++
	version := fmt.Sprintf("..%d", d.tokens)
	writeFile(d.t, filepath.Join(vol, version, "token"), []byte(token), 0o600)
	old, _ := os.Readlink(filepath.Join(vol, "..data"))
	tmp := filepath.Join(vol, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(vol, "..data")); err != nil {
		d.t.Fatal(err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(vol, old)); err != nil {
			d.t.Fatal(err)
		}
	}
	path := filepath.Join(vol, "token")
	if _, err := os.Lstat(path); err != nil {
		if err := os.Symlink(filepath.Join("..data", "token"), path); err != nil {
			d.t.Fatal(err)
		}
	}
	return path
}

// requireTools fails the test, saying how to get them, when a tool is missing.
func requireTools(t testing.TB) (agentBin string) {
	t.Helper()
	root := testenv.RepoRoot()
	agentBin = filepath.Join(root, "bin", "nginx-agent")
	if _, err := os.Stat(agentBin); err != nil {
		t.Fatalf("%s is missing: build it with `hack/nginx-agent.sh` (nginx-agent v3.11.2 from the Go module proxy)", agentBin)
	}
	if _, err := exec.LookPath("nginx"); err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Fatalf("NGINX is missing: install it with `make nginx` (hack/nginx.sh)")
		}
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is missing: it isolates each data plane in its own namespaces")
	}
	if os.Geteuid() != 0 {
		t.Fatalf("the data-plane tests run NGINX and nginx-agent in private mount namespaces and need root")
	}
	return agentBin
}

// newDataPlane prepares a data plane connecting to cp; start starts it.
func newDataPlane(t testing.TB, cp *controlPlane, opts dataPlaneOptions) *dataPlane {
	t.Helper()
	requireTools(t)
	if opts.labelGateway == (agent.Key{}) {
		opts.labelGateway = opts.gateway
	}
	if opts.token == "" {
		opts.token = "token-" + opts.pod.Name
		cp.admit(opts.token, opts.pod, opts.gateway)
	}
	d := &dataPlane{t: t, opts: opts, dir: t.TempDir(), ip: newLoopback(), out: &syncBuffer{}}
	for _, sub := range []string{"etc-nginx", "log", "agent", "containers"} {
		if err := os.MkdirAll(filepath.Join(d.dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tokenFile := d.writeToken(opts.token)
	if opts.metrics {
		d.metricsPort = freePort(t, d.ip)
	}
	conf, err := agent.AgentConfig(agent.AgentConfigParams{
		ServerHost:             cp.ip,
		ServerPort:             cp.port,
		CAFile:                 cp.ca.pemFile,
		ServerName:             serverName,
		TokenFile:              tokenFile,
		Gateway:                opts.labelGateway,
		LogLevel:               cmp.Or(opts.logLevel, "debug"),
		ReloadMonitoringPeriod: time.Second,
		MetricsPort:            d.metricsPort,
		MetricsHost:            metricsHost(d.metricsPort, d.ip),
	})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(d.dir, "agent", "nginx-agent.conf"), conf, 0o644)
	t.Cleanup(func() {
		d.kill()
		if t.Failed() || os.Getenv("AGENT_E2E_LOGS") != "" {
			t.Logf("data plane %s output:\n%s", opts.pod.Name, d.out.String())
		}
	})
	return d
}

// metricsHost is ip when metrics are on: tests serve on loopback only.
func metricsHost(port int, ip string) string {
	if port == 0 {
		return ""
	}
	return ip
}

// start starts the data plane as a new container.
func (d *dataPlane) start() {
	d.t.Helper()
	if d.cmd != nil {
		d.t.Fatalf("data plane %s is running", d.opts.pod.Name)
	}
	root := testenv.RepoRoot()
	cid := make([]byte, 32)
	_, _ = rand.Read(cid)
	ctr := filepath.Join(d.dir, "containers", hex.EncodeToString(cid))
	if err := os.MkdirAll(ctr, 0o755); err != nil {
		d.t.Fatal(err)
	}
	script := `set -eu
mount -t tmpfs -o mode=0755 gatewall-run /run
mount -t tmpfs -o mode=0755 gatewall-cache /var/cache
mount --bind "$D/etc-nginx" /etc/nginx
mount --bind "$D/log" /var/log/nginx
mount --bind "$CTR" "$CTR"
mkdir -p /run/nginx-agent
if [ -d /etc/nginx-agent ]; then mount --bind "$D/agent" /etc/nginx-agent; fi
cd "$D/agent"
exec "$ENTRYPOINT" --lib-dir /run/nginx-agent
`
	cmd := exec.Command("unshare", "--fork", "--pid", "--mount-proc", "--mount", "--propagation", "private",
		"--kill-child", "sh", "-c", script)
	cmd.Env = append(os.Environ(),
		"D="+d.dir,
		"CTR="+ctr,
		"ENTRYPOINT="+filepath.Join(root, "build", "dataplane", "entrypoint.sh"),
		"GATEWALL_NGINX_AGENT="+filepath.Join(root, "bin", "nginx-agent"),
		"GATEWALL_NGINX_BOOTSTRAP="+filepath.Join(root, "build", "dataplane", "nginx-bootstrap.conf"),
	)
	cmd.Stdout, cmd.Stderr = d.out, d.out
	// Its own process group, so that everything it started is killed at the
	// end; and killed with the test process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(d.out, "=== %s start (container %.12s)\n", time.Now().Format("15:04:05.000"), filepath.Base(ctr))
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("starting the data plane: %v", err)
	}
	d.cmd, d.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(d.exited)
}

// stop stops the data plane the way the kubelet does: SIGTERM to the
// container's first process, the entrypoint. It returns the entrypoint's exit
// code.
func (d *dataPlane) stop() int {
	d.t.Helper()
	if d.cmd == nil {
		return -1
	}
	init := d.nsInit()
	if init == 0 {
		d.t.Fatalf("data plane %s: no entrypoint process", d.opts.pod.Name)
	}
	_ = syscall.Kill(init, syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		d.t.Errorf("data plane %s did not stop 20 s after SIGTERM", d.opts.pod.Name)
		d.kill()
	}
	code := d.cmd.ProcessState.ExitCode()
	d.cmd = nil
	return code
}

// kill kills the data plane at once (and with it its namespaces).
func (d *dataPlane) kill() {
	if d.cmd == nil {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		d.t.Errorf("data plane %s survived SIGKILL", d.opts.pod.Name)
	}
	d.cmd = nil
}

// waitExit waits for the data plane to exit by itself and returns the code.
func (d *dataPlane) waitExit(timeout time.Duration) int {
	d.t.Helper()
	select {
	case <-d.exited:
	case <-time.After(timeout):
		d.t.Fatalf("data plane %s still runs after %v", d.opts.pod.Name, timeout)
	}
	code := d.cmd.ProcessState.ExitCode()
	d.cmd = nil
	return code
}

// nsInit is the host PID of the namespace's first process (unshare's child).
func (d *dataPlane) nsInit() int {
	kids := testenv.Children(d.cmd.Process.Pid)
	if len(kids) == 0 {
		return 0
	}
	return kids[0]
}

// process returns the host PID of the data plane's process named comm.
func (d *dataPlane) process(comm string) int {
	queue := []int{d.cmd.Process.Pid}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if name, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(name)) == comm {
			return pid
		}
		queue = append(queue, testenv.Children(pid)...)
	}
	return 0
}

// etcNginx is the host path of the data plane's /etc/nginx/<rel>.
func (d *dataPlane) etcNginx(rel string) string {
	return filepath.Join(d.dir, "etc-nginx", rel)
}
