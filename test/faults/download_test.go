package faults

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/test/testenv"
)

// servedServers is when the manager first served servers.conf to gw's agent
// after since.
func servedServers(rec *testenv.AgentEvents, s *scene) (time.Time, bool) {
	for _, ev := range rec.Of(agent.EventFileServed, s.gw) {
		if strings.HasSuffix(ev.Path, "/servers.conf") {
			return ev.At, true
		}
	}
	return time.Time{}, false
}

// download is a push of the big routes in flight, its files served slowly.
type download struct {
	old    snapshot             // NGINX's configuration before
	start  time.Time            // when the push was caused
	served time.Time            // when servers.conf began to be served
	rec    *testenv.AgentEvents // the leading manager's agent events
	fault  *fault               // on the leading manager pod, throttled
	leader corev1.Pod           // the leading manager pod
}

// startDownload slows the leading manager's link to the agents to 1 Mbit/s,
// enables the big routes, waits until the agent is served servers.conf,
// then one more second: the download of some 1.3 MB is well under way.
func (s *scene) startDownload(t *testing.T) download {
	t.Helper()
	s.createBig(t)
	d := download{old: s.nginx.current(t), start: time.Now()}
	d.rec = rt.WatchEvents(t, d.start)
	d.fault, d.leader = onLeader(t)
	d.fault.throttle(t, "1mbit")
	s.enableBig(t)
	testenv.Eventually(t, 60*time.Second, func() error {
		var ok bool
		if d.served, ok = servedServers(d.rec, s); !ok {
			return errf("waiting for the agent to start downloading servers.conf")
		}
		return nil
	})
	time.Sleep(time.Second) // 1.3 MB at 1 Mbit/s takes some 10 s
	return d
}

// TestConnectionDropsMidDownload: the manager's link to the agent is slowed
// to 1 Mbit/s, a configuration of some 1.3 MB is pushed, and while the agent
// downloads it (streamed in chunks) every agent connection to the manager
// is reset and refused for 5 s. NGINX keeps its configuration (no file on
// disk ever holds part of the new one, no reload), the unchanged route
// serves every request, and once connections are allowed again the agent
// gets the configuration whole: the new routes serve and the Gateway is
// Programmed again.
func TestConnectionDropsMidDownload(t *testing.T) {
	s := setUp(t, "faults-download")
	d := s.startDownload(t)
	old, start, rec, f, served := d.old, d.start, d.rec, d.fault, d.served
	cut := time.Now()
	f.cutAgents(t)
	time.Sleep(5 * time.Second)
	s.notProgrammed(t)
	if n := s.nginx.reloadsBefore(time.Now()); n != 0 {
		t.Errorf("NGINX reloaded %d times while the connection was cut", n)
	}
	f.heal(t)
	healed := time.Now()
	s.servesBig(t, 120*time.Second)
	served2 := time.Since(healed)
	programmed := s.converged(t, healed)

	// The download was cut, not finished: the agent's first answer to the
	// push is a failure (it rolled back), and the configuration came whole
	// with a later push.
	results := rec.Of(agent.EventApplyResult, s.gw)
	if len(results) == 0 || results[0].Message == "OK" {
		t.Errorf("the agent's answers to the pushes %+v: want a failure first (the cut download), then OK", results)
	}
	sent, failed, reloads := s.finish(t, old, 1)
	t.Logf("download cut %s after it started (servers.conf served at %s): %d requests, %d failed; NGINX reloaded %d time(s), with the whole new configuration; after the connection came back the new routes served in %s, the Gateway was Programmed in %s; agent answers: %s",
		cut.Sub(served).Round(time.Millisecond), served.Sub(start).Round(time.Millisecond), sent, failed, reloads,
		served2.Round(time.Millisecond), programmed.Round(time.Millisecond), answers(results))
}

// answers lists the agent's answers briefly.
func answers(evs []testenv.TimedEvent) string {
	var out []string
	for _, ev := range evs {
		m := ev.Message
		if len(m) > 80 {
			m = m[:80] + "..."
		}
		out = append(out, m)
	}
	return "[" + strings.Join(out, " | ") + "]"
}
