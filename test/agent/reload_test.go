package agente2e

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/status"
)

// TestReloadErrorInLog: a configuration that passes `nginx -t` but that the
// running NGINX cannot apply fails, and Programmed says so with NGINX's
// error. The case is a port another process holds: `nginx -t` does not
// report EADDRINUSE, the reload logs `bind() to ... failed (98: Address
// already in use)`; only the agent's watch of the error log after the reload
// sees it. The main nginx.conf is Gatewall's own rendering, so its error_log
// directives are what the agent watches in a pod. NGINX keeps serving the
// last good configuration, and still logs to stderr (the container log).
func TestReloadErrorInLog(t *testing.T) {
	t.Parallel()
	sc := startReloadScene(t)
	cp, dp, gw, pod, port, held, plane := sc.cp, sc.dp, sc.gw, sc.pod, sc.port, sc.held, sc.plane
	home := url(dp.ip, port, "http")

	plane.Publish(gw, gatewallConf(site(dp.ip, port, "first")))
	cp.waitPod(gw, pod, agent.Applied, applyTimeout)
	waitBody(t, nil, home, "first", 5*time.Second)
	// A request in progress keeps the first configuration's worker after
	// the next reload, as any long-lived connection does in a Gateway that
	// serves traffic: the agent then finds its worker check after a reload
	// passed at once, and the agent's rollback of the failed reload below
	// starts while NGINX still retries bind().
	holdWorker(t, dp.ip, port)
	good := plane.Publish(gw, gatewallConf(site(dp.ip, port, "good")))
	cp.waitPod(gw, pod, agent.Applied, applyTimeout)
	goodAgent := cp.srv.Status(gw).Version
	waitBody(t, nil, home, "good", 5*time.Second)
	if c := programmedCondition(plane.State(gw, good)); c.Status != metav1.ConditionTrue {
		t.Fatalf("Programmed after a good push: %+v", c)
	}

	bad := plane.Publish(gw, gatewallConf(site(dp.ip, port, "bad")+site(dp.ip, held, "held")))
	st := cp.waitPod(gw, pod, agent.Failed, applyTimeout)
	bindErr := "bind() to " + net.JoinHostPort(dp.ip, strconv.Itoa(held)) + " failed (98: Address already in use)"
	if !strings.Contains(st.Message, "[emerg]") || !strings.Contains(st.Message, bindErr) {
		t.Fatalf("failure message %q lacks NGINX's logged %q", st.Message, bindErr)
	}
	if strings.Contains(st.Message, "nginx: [emerg]") {
		t.Fatalf("failure message %q is from `nginx -t`, which was to pass", st.Message)
	}
	if st.Failure != agent.FailureRejected || st.AppliedVersion != goodAgent {
		t.Fatalf("pod status %+v, want Rejected with the last good version %s applied", st, goodAgent)
	}
	c := programmedCondition(plane.State(gw, bad))
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, bindErr) ||
		!strings.Contains(c.Message, "keeps its last good configuration") {
		t.Fatalf("Programmed after the failed reload: %+v; want False quoting %q", c, bindErr)
	}

	// NGINX gave up the failed reload, then reloaded the files the agent
	// restored (the rollback's SIGHUP waited), and serves the good ones.
	waitFor(t, 10*time.Second, "NGINX to reload after the failed reload", func() (bool, string) {
		_, after, found := strings.Cut(dp.out.String(), "still could not bind()")
		return found && strings.Contains(after, "start worker processes"), ""
	})
	waitBody(t, nil, home, "good", 5*time.Second)
	time.Sleep(2 * time.Second)
	if body, err := get(nil, home); err != nil || body != "good" {
		t.Fatalf("after the failed reload NGINX answers %q, %v; want the last good configuration", body, err)
	}
	if !strings.Contains(dp.out.String(), bindErr) {
		t.Fatalf("NGINX's error is not in the container log (stderr)")
	}

	fixed := plane.Publish(gw, gatewallConf(site(dp.ip, port, "fixed")))
	cp.waitPod(gw, pod, agent.Applied, applyTimeout)
	waitBody(t, nil, home, "fixed", 5*time.Second)
	if c := programmedCondition(plane.State(gw, fixed)); c.Status != metav1.ConditionTrue {
		t.Fatalf("Programmed after a fixed push: %+v", c)
	}
}

// gatewallConf is the configuration Gatewall renders for no routes (its
// nginx.conf, with its error_log directives, and http.conf), with servers
// as servers.conf: a rendered server listens on every address, which
// concurrent tests cannot share.
func gatewallConf(servers string) []config.File {
	files := (&config.Config{Main: config.Main{WorkerConnections: 64, ErrorLevel: "info", IPv4: true}}).Files()
	for i := range files {
		if files[i].Path == config.ServersConfPath {
			files[i].Data = []byte(servers)
		}
	}
	return files
}

// reloadScene is a started data plane of Gateway ns/gw (pod ns/gw-0) with
// a free port for NGINX and another port a different process of the pod
// holds, and Gatewall's publisher to it.
type reloadScene struct {
	cp         *controlPlane
	dp         *dataPlane
	gw, pod    types.NamespacedName
	port, held int
	plane      *dataplane.AgentDataPlane
}

func startReloadScene(t *testing.T) reloadScene {
	t.Helper()
	cp := startControlPlane(t, controlPlaneOptions{})
	s := reloadScene{cp: cp, gw: types.NamespacedName{Namespace: "ns", Name: "gw"}, pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}}
	s.dp = newDataPlane(t, cp, dataPlaneOptions{pod: s.pod, gateway: s.gw})
	s.port = freePort(t, s.dp.ip)
	s.held = holdPort(t, s.dp.ip)
	s.dp.start()
	s.plane = dataplane.NewAgentDataPlane(cp.srv, nil)
	return s
}

// holdPort listens on a free port of ip until the test ends, as another
// process of the pod would, and returns the port.
func holdPort(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", ip, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// holdWorker sends a request that never ends to ip:port, which keeps the
// NGINX worker that accepted it until the test ends (client_header_timeout
// is 60 s).
func holdWorker(t *testing.T, ip string, port int) {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("connecting to NGINX: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: held\r\n")); err != nil {
		t.Fatalf("sending a request to NGINX: %v", err)
	}
}

// programmedCondition is the Programmed condition Gatewall writes for a
// valid Gateway whose data plane is in state dp.
func programmedCondition(dp status.DataPlane) metav1.Condition {
	g := &graph.Gateway{Source: &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, Valid: true}
	st := status.Gateway(g, dp, nil, nil, nil, gatewayv1.GatewayStatus{}, metav1.Now())
	for _, c := range st.Conditions {
		if c.Type == string(gatewayv1.GatewayConditionProgrammed) {
			return c
		}
	}
	return metav1.Condition{}
}
