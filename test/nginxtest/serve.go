package nginxtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/local/netns"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Server is a real NGINX serving rendered files, in private mount and
// network namespaces (as Test runs `nginx -t`): its ports are the
// namespace's, reached with Dial, and backends listen there with Listen.
type Server struct {
	cmd  *exec.Cmd
	root string
	mu   sync.Mutex
	out  bytes.Buffer
}

// Serve starts NGINX on files. addrs are added to the namespace's loopback
// interface, for backends (Gatewall refuses loopback endpoints). It
// returns once NGINX accepts connections on port, or fails. It needs root:
// the test's own process joins NGINX's network namespace (Dial, Listen),
// which a process outside an unprivileged user namespace cannot.
// Tests that serve call RequireRoot first.
func Serve(files []config.File, port int, addrs ...string) (*Server, error) {
	return ServeWith(ServeOptions{Files: files, Port: port, Addrs: addrs})
}

// ServeOptions are what ServeWith starts NGINX with.
type ServeOptions struct {
	Files []config.File
	// Port is a port NGINX listens on; Addrs, as Serve's.
	Port  int
	Addrs []string
	// EndpointsState, when set, is in NGINX's run directory before it
	// starts: the state file a pod's endpoints client leaves for an NGINX
	// that starts again in the pod; KeySetsState the same of the remote
	// JWT key sets.
	EndpointsState, KeySetsState []byte
}

// ServeWith starts NGINX as Serve does, with more options.
func ServeWith(o ServeOptions) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("serving through NGINX needs root (the test joins NGINX's network namespace)")
	}
	root, err := os.MkdirTemp("", "gatewall-nginx-serve-")
	if err != nil {
		return nil, err
	}
	if err := WriteRoot(root, o.Files); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	// The data plane's NGINX runs as one user, who owns the files
	// nginx-agent writes, 0600 secrets among them; its workers open some
	// per request (a Basic authentication's file of users). A root
	// NGINX's workers run as nobody, who is given them here.
	script := Isolate(root) + "chown -R nobody /etc/nginx\nip link set lo up\n"
	for _, a := range o.Addrs {
		script += "ip addr add " + a + " dev lo\n"
	}
	if o.EndpointsState != nil {
		state := filepath.Join(root, ".endpoints-state")
		if err := os.WriteFile(state, o.EndpointsState, 0o644); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
		script += "cp " + state + " " + endpoints.StateFile + "\n"
	}
	if o.KeySetsState != nil {
		state := filepath.Join(root, ".key-sets-state")
		if err := os.WriteFile(state, o.KeySetsState, 0o600); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
		script += "cp " + state + " " + endpoints.KeySetsStateFile + "\n"
	}
	port := o.Port
	s := &Server{root: root}
	// unshare execs the shell, which execs NGINX: its process is in the
	// namespaces, so /proc/PID/ns/net is theirs.
	s.cmd = unshare(script + "exec " + Binary + " -g 'daemon off;'")
	s.cmd.Stdout, s.cmd.Stderr = s, s
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		c, err := s.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return s, nil
		}
		if time.Since(start) > 10*time.Second || s.cmd.ProcessState != nil {
			out := s.Stop()
			return nil, fmt.Errorf("NGINX does not accept connections on port %d: %v\n%s", port, err, out)
		}
	}
}

// RequireRoot skips a test that serves traffic through NGINX when it does
// not run as root, saying so: `make unit` runs without root, `make test`
// (and CI) runs as root and runs every such test.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("serves traffic through real NGINX in its network namespace, which needs root: `make test` runs it")
	}
}

// Write collects NGINX's output.
func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *Server) netns() string { return fmt.Sprintf("/proc/%d/ns/net", s.cmd.Process.Pid) }

// Dial connects to addr inside NGINX's network namespace.
func (s *Server) Dial(network, addr string) (net.Conn, error) {
	var c net.Conn
	err := netns.Do(s.netns(), func() error {
		var err error
		c, err = net.DialTimeout(network, addr, 5*time.Second)
		return err
	})
	return c, err
}

// DialFrom connects to addr inside NGINX's network namespace from the
// local address laddr (a loopback address of the namespace, for a client
// of its own address).
func (s *Server) DialFrom(network, laddr, addr string) (net.Conn, error) {
	local, err := net.ResolveTCPAddr(network, laddr)
	if err != nil {
		return nil, err
	}
	var c net.Conn
	err = netns.Do(s.netns(), func() error {
		var err error
		c, err = (&net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}).Dial(network, addr)
		return err
	})
	return c, err
}

// DialContext is Dial for an http.Transport.
func (s *Server) DialContext(_ context.Context, network, addr string) (net.Conn, error) {
	return s.Dial(network, addr)
}

// Listen listens on addr inside NGINX's network namespace (a backend).
func (s *Server) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := netns.Do(s.netns(), func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// ListenPacket listens for datagrams on addr inside NGINX's network
// namespace (a UDP backend).
func (s *Server) ListenPacket(network, addr string) (net.PacketConn, error) {
	var c net.PacketConn
	err := netns.Do(s.netns(), func() error {
		var err error
		c, err = net.ListenPacket(network, addr)
		return err
	})
	return c, err
}

// SetEndpoints hands NGINX the configuration's endpoints as a data-plane
// pod's endpoints client does (the whole set): NGINX answers its readiness
// probe only once it has them.
func (s *Server) SetEndpoints(set endpoints.Set) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	refused, err := s.EndpointsClient().Apply(ctx, endpoints.Snapshot(set, 1), set)
	if err == nil && len(refused) > 0 {
		err = fmt.Errorf("NGINX refused upstreams: %v", refused)
	}
	return err
}

// EndpointsClient hands NGINX endpoint updates (and remote JWT key sets)
// through its control socket, with the data plane's own client code.
func (s *Server) EndpointsClient() *endpointfeed.NGINX {
	return &endpointfeed.NGINX{Socket: s.Path(endpoints.Socket), Path: endpoints.ControlPath, StateFile: s.Path(endpoints.StateFile),
		KeySetsPath: endpoints.KeySetsPath, KeySetsStateFile: s.Path(endpoints.KeySetsStateFile)}
}

// Path is a path of NGINX's mount namespace, seen from the test's. /var/run
// is a link to /run, which the kernel would follow in the test's own root.
func (s *Server) Path(p string) string {
	p = strings.Replace(p, "/var/run/", "/run/", 1)
	return filepath.Join(fmt.Sprintf("/proc/%d/root", s.cmd.Process.Pid), p)
}

// Output is what NGINX wrote so far.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// PID is NGINX's master process.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Workers are the PIDs of NGINX's worker processes: a reload replaces them.
func (s *Server) Workers() string {
	out, _ := exec.Command("pgrep", "-P", fmt.Sprint(s.cmd.Process.Pid)).Output()
	return strings.TrimSpace(string(out))
}

// Command is a command run in NGINX's network namespace (a client such
// as openssl s_client, which speaks what Go's crypto/tls does not).
func (s *Server) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + s.netns(), "--", name}, args...)...)
}

// DropPacketsTo makes the namespace drop every packet sent to ip, as the
// address of a pod that is gone does (iptables).
func (s *Server) DropPacketsTo(ip string) error {
	out, err := exec.Command("nsenter", "--net="+s.netns(), "iptables", "-w", "-A", "OUTPUT", "-d", ip, "-j", "DROP").CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables: %w: %s", err, out)
	}
	return nil
}

// Reload writes files over NGINX's configuration (as nginx-agent does,
// files no longer in it left in place) and has NGINX reload it, as a pod's
// configuration change does: the master stays, new workers start. It
// returns once the workers changed.
func (s *Server) Reload(files []config.File) error {
	before := s.Workers()
	if err := WriteRoot(s.root, files); err != nil {
		return err
	}
	if out, err := exec.Command("chown", "-R", "nobody", filepath.Join(s.root, "etc", "nginx")).CombinedOutput(); err != nil {
		return fmt.Errorf("chown: %w: %s", err, out)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return err
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if w := s.Workers(); w != "" && !sharesPID(w, before) {
			return nil
		}
		if time.Since(start) > 10*time.Second {
			return fmt.Errorf("NGINX did not reload: workers %q, before %q\n%s", s.Workers(), before, s.Output())
		}
	}
}

// sharesPID says whether two lists of PIDs (one a line) have one in common.
func sharesPID(a, b string) bool {
	seen := map[string]bool{}
	for _, p := range strings.Fields(b) {
		seen[p] = true
	}
	for _, p := range strings.Fields(a) {
		if seen[p] {
			return true
		}
	}
	return false
}

// Stop stops NGINX, removes its files and returns what it wrote.
func (s *Server) Stop() string {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.root)
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(s.out.String())
}
