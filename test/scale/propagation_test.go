package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/test/testenv"
)

// propagation creates one more route at a time and times it from the
// create to its first 200 through NGINX, split at the push the manager
// sent after the create: the control plane (watch, translation, rendering,
// the push) and the data plane (the agent fetching and writing the files,
// nginx -t, the reload, the first request). Each sample waits for the
// agent's answer to its push before the next, so that none queues behind
// another.
func (b *big) propagation(t *testing.T) {
	began := time.Now()
	ev := rt.WatchEvents(t, began)
	// The samples take some 1.5 s each at 5,000 routes.
	profiled := profileCPU(t, *profileFlag, time.Duration(*samplesFlag)*time.Second)
	defer profiled()
	var total, control, data []time.Duration
	var creates, pushes, served []time.Time
	var pushed []int64
	var steps controlSteps
	for j := 0; j < *samplesFlag; j++ {
		host := fmt.Sprintf("p%d.scale.test", j)
		created := time.Now()
		rt.Create(t, testenv.HTTPRoute(b.ns, fmt.Sprintf("p%d", j), "gw", host, "/", "echo"))
		steps.create = append(steps.create, time.Since(created))
		at, err := reaches(b.addr, host, servedByEcho, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var push, answered time.Time
		var pushEv testenv.TimedEvent
		testenv.Eventually(t, time.Minute, func() error {
			pushEv, answered = firstEventAfter(ev, b, agent.EventPushSent, created), firstAfter(ev, b, agent.EventApplyResult, created)
			push = pushEv.At
			if push.IsZero() || answered.IsZero() {
				return fmt.Errorf("no push of route %s answered in the manager's log yet", host)
			}
			return nil
		})
		steps.add(t, ev, b, created, pushEv)
		total = append(total, at.Sub(created))
		control = append(control, push.Sub(created))
		data = append(data, at.Sub(push))
		creates, pushes, served = append(creates, created), append(pushes, push), append(served, at)
		pushed = append(pushed, b.bytesServed(ev, created, answered))
		time.Sleep(100 * time.Millisecond)
	}
	var toAgent, inAgent, toServed []time.Duration
	// The pod's log can lag the last sample's reload: read it until it
	// has every push's receipt and reload.
	testenv.Eventually(t, 30*time.Second, func() error {
		toAgent, inAgent, toServed = nil, nil, nil
		received, reloading := b.agentSteps(t, began)
		for j, push := range pushes {
			// The push's receipt is the first after its route's creation
			// (the previous push was answered by then): the manager logs
			// a push once sent, and a small one can be received first.
			r := firstFrom(received, creates[j])
			s := firstFrom(reloading, r)
			if r.IsZero() || s.IsZero() {
				return fmt.Errorf("the agent's log has no receipt or reload of push %d (%s)", j, push)
			}
			toAgent, inAgent, toServed = append(toAgent, max(0, r.Sub(push))), append(inAgent, s.Sub(r)), append(toServed, served[j].Sub(s))
		}
		return nil
	})
	check := nginxTest(t, b.master)
	reload := nginxReload(t, b.master)
	t.Logf("create to first 200: %v; create to push: %v; push to first 200: %v; bytes fetched: %v; nginx -t %s, reload %s",
		total, control, data, pushed, check, reload)
	t.Logf("create call: %v; create to reconcile: %v; snapshot: %v; translation: %v; published to pushed: %v", steps.create, steps.toReconcile, steps.snapshot, steps.translation, steps.toPush)
	report.add(fmt.Sprintf("one more route, create to first 200, p50 / p99 (%d routes)", len(total)),
		fmt.Sprintf("%s / %s (`nginx -t` %s, reload %s: %.1fx `nginx -t`)", ms(percentile(total, .5)), ms(percentile(total, .99)), ms(check), ms(reload),
			float64(percentile(total, .5))/float64(check)),
		"<= 3x `nginx -t`; <= 100 ms at 50 routes")
	report.add("  control plane: create to push, p50 / p99", fmt.Sprintf("%s / %s", ms(percentile(control, .5)), ms(percentile(control, .99))), "")
	report.add("    the API server's answer to the create; create to the reconcile that pushed it; its snapshot; its translation; published to pushed, p50",
		fmt.Sprintf("%s; %s; %s; %s; %s", ms(percentile(steps.create, .5)), ms(percentile(steps.toReconcile, .5)), ms(percentile(steps.snapshot, .5)),
			ms(percentile(steps.translation, .5)), ms(percentile(steps.toPush, .5))), "")
	report.add("  data plane: push to first 200, p50 / p99", fmt.Sprintf("%s / %s", ms(percentile(data, .5)), ms(percentile(data, .99))), "")
	report.add("    push to the agent; the agent: receipt to reload signal (fetch, write, its `nginx -t`); reload signal to first 200, p50",
		fmt.Sprintf("%s; %s; %s", ms(percentile(toAgent, .5)), ms(percentile(inAgent, .5)), ms(percentile(toServed, .5))), "")
	report.add("  outside NGINX's test and reload, p50", ms(percentile(total, .5)-check-reload), "<= 50 ms at 5,000 routes")
	report.add("bytes the agent fetched per change, p50", fmt.Sprintf("%d", percentile(pushed, .5)), "")
}

// firstAfter is when the manager first logged an event of type typ about
// the big Gateway at or after since; zero if it did not yet.
func firstAfter(ev *testenv.AgentEvents, b *big, typ agent.EventType, since time.Time) time.Time {
	return firstEventAfter(ev, b, typ, since).At
}

// firstEventAfter is that event (zero if none).
func firstEventAfter(ev *testenv.AgentEvents, b *big, typ agent.EventType, since time.Time) testenv.TimedEvent {
	for _, e := range ev.Of(typ, b.gw) {
		if !e.At.Before(since) {
			return e
		}
	}
	return testenv.TimedEvent{}
}

// controlSteps splits a sample's control plane: the API server's answer to
// the create; from the create to the start of the reconcile that published
// its push (the API server's answer, its watch delivery, and waiting for a
// reconcile of the Gateway under way); the reconcile's snapshot and
// translation; and from publishing to the push.
type controlSteps struct{ create, toReconcile, snapshot, translation, toPush []time.Duration }

func (c *controlSteps) add(t *testing.T, ev *testenv.AgentEvents, b *big, created time.Time, push testenv.TimedEvent) {
	t.Helper()
	var p testenv.Publication
	testenv.Eventually(t, 30*time.Second, func() error {
		var ok bool
		if p, ok = ev.Published(b.gw, push.Version); !ok {
			return fmt.Errorf("the manager's log has no publication of version %s", push.Version)
		}
		return nil
	})
	c.toReconcile = append(c.toReconcile, p.At.Add(-p.Took).Sub(created))
	c.snapshot = append(c.snapshot, p.Snapshot)
	c.translation = append(c.translation, p.Translation)
	c.toPush = append(c.toPush, push.At.Sub(p.At))
}

// bytesServed sums the sizes, in the pod, of the files the agent fetched
// between from and to.
func (b *big) bytesServed(ev *testenv.AgentEvents, from, to time.Time) int64 {
	var n int64
	for _, e := range ev.Of(agent.EventFileServed, b.gw) {
		if e.At.Before(from) || e.At.After(to) {
			continue
		}
		if fi, err := os.Stat(filepath.Join("/proc", strconv.Itoa(b.master), "root", e.Path)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// agentSteps are when the big Gateway's agent logged, since since, that it
// received a push and that it signalled NGINX to reload (nginx-agent's
// log: time=... msg="...").
func (b *big) agentSteps(t *testing.T, since time.Time) (received, reloading []time.Time) {
	t.Helper()
	lines, err := rt.PodLog(context.Background(), b.pod)
	if err != nil {
		t.Fatalf("the data-plane pod's log: %v", err)
	}
	for _, line := range lines {
		_, rest, ok := strings.Cut(line, "time=")
		if !ok {
			continue
		}
		stamp, msg, _ := strings.Cut(rest, " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || at.Before(since.Truncate(time.Millisecond)) {
			continue
		}
		switch {
		case strings.Contains(msg, `msg="Received management plane config apply request"`):
			received = append(received, at)
		case strings.Contains(msg, `msg="Reloading NGINX master process"`):
			reloading = append(reloading, at)
		}
	}
	return received, reloading
}

// firstFrom is the first of ts at or after at; zero if none.
func firstFrom(ts []time.Time, at time.Time) time.Time {
	for _, x := range ts {
		if !x.Before(at.Truncate(time.Millisecond)) {
			return x
		}
	}
	return time.Time{}
}
