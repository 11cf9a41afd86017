package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/localrun"
)

// AgentEvents records the agent server's protocol events, read from the
// manager's log (the test runtime runs it at the verbosity that logs them,
// manager.AgentEventsVerbosity).
type AgentEvents struct {
	mu           sync.Mutex
	all          []TimedEvent
	desired      []TimedEvent
	publications []Publication
}

// Publication is a configuration the Gateway reconciler published, and how
// long the reconcile that published it took for its steps.
type Publication struct {
	At      time.Time
	Gateway types.NamespacedName
	// Version is the agent server's version of it, as its pushes carry.
	Version string
	// Snapshot is reading the inputs from the cache, Translation
	// translating them (or reusing the translation of the same input), Took
	// the reconcile from its start until published.
	Snapshot, Translation, Took time.Duration
}

// TimedEvent is an agent event and when the manager logged it.
type TimedEvent struct {
	At time.Time
	agent.Event
}

// logLine is what the manager logs of an agent event (zap's JSON).
type logLine struct {
	TS      time.Time    `json:"ts"`
	Msg     string       `json:"msg"`
	Type    string       `json:"type"`
	Gateway gatewayField `json:"gateway"`
	Pod     string       `json:"pod"`
	Version string       `json:"version"`
	Path    string       `json:"path"`
	Message string       `json:"message"`
	// A publication's.
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Snapshot    string `json:"snapshot"`
	Translation string `json:"translation"`
	Published   string `json:"published"`
}

// gatewayField is a Gateway as the manager logs it: "namespace/name" in
// agent events, an object where the logger is handed the key itself.
type gatewayField string

func (g *gatewayField) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*g = gatewayField(s)
		return nil
	}
	var o struct{ Namespace, Name string }
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*g = gatewayField(o.Namespace + "/" + o.Name)
	return nil
}

// publication is the line's publication, if it logs one. Version is the
// configuration's; the agent server's own version, which its pushes carry,
// is logged by the line before (desired).
func (l logLine) publication() (Publication, bool) {
	if l.Msg != "configuration published" {
		return Publication{}, false
	}
	p := Publication{At: l.TS, Gateway: types.NamespacedName{Namespace: l.Namespace, Name: l.Name}}
	var errs [3]error
	p.Snapshot, errs[0] = time.ParseDuration(l.Snapshot)
	p.Translation, errs[1] = time.ParseDuration(l.Translation)
	p.Took, errs[2] = time.ParseDuration(l.Published)
	return p, errors.Join(errs[:]...) == nil
}

// LeaderName is the manager pod holding the leader Lease ("" if none).
func (l *Local) LeaderName(ctx context.Context) string {
	lease := &coordinationv1.Lease{}
	if err := l.Client.Get(ctx, client.ObjectKey{Namespace: localrun.ManagerNamespace, Name: localrun.LeaderLease}, lease); err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	name, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_") // "<pod>_<uuid>"
	return name
}

// LeaderPod is the manager pod that holds the leader Lease now; the test
// fails if there is none.
func (l *Local) LeaderPod(t *testing.T) corev1.Pod {
	t.Helper()
	name := l.LeaderName(context.Background())
	pod := corev1.Pod{}
	if err := l.Client.Get(context.Background(), client.ObjectKey{Namespace: localrun.ManagerNamespace, Name: name}, &pod); err != nil {
		t.Fatalf("the leading manager pod %q: %v", name, err)
	}
	return pod
}

// WatchEvents follows the log of the manager pod that leads now (it holds
// the leader Lease), from since, until the test ends.
func (l *Local) WatchEvents(t *testing.T, since time.Time) *AgentEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	leader := l.LeaderName(ctx)
	if leader == "" {
		t.Fatal("no manager pod holds the leader Lease")
	}
	stream, err := l.Clientset.CoreV1().Pods(localrun.ManagerNamespace).GetLogs(leader, &corev1.PodLogOptions{
		Follow: true, SinceTime: &metav1.Time{Time: since.Add(-time.Second)},
	}).Stream(ctx)
	if err != nil {
		t.Fatalf("following the manager's log: %v", err)
	}
	e := &AgentEvents{}
	go func() {
		defer stream.Close()
		s := bufio.NewScanner(stream)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			e.record(s.Bytes(), since)
		}
	}()
	return e
}

// record keeps what a line of the manager's log at or after since says of
// agent events and publications.
func (e *AgentEvents) record(line []byte, since time.Time) {
	var l logLine
	if json.Unmarshal(line, &l) != nil || l.TS.Before(since) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch l.Msg {
	case "agent event":
		e.all = append(e.all, TimedEvent{l.TS, agent.Event{
			Type: agent.EventType(l.Type), Key: namespacedName(string(l.Gateway)), Pod: namespacedName(l.Pod),
			Version: l.Version, Path: l.Path, Message: l.Message,
		}})
	case "Desired configuration set":
		// The agent server logs the configuration it was handed, with its
		// version, before the reconcile that handed it logs the
		// publication, in the same goroutine.
		e.desired = append(e.desired, TimedEvent{l.TS, agent.Event{Key: namespacedName(string(l.Gateway)), Version: l.Version}})
	default:
		p, ok := l.publication()
		if !ok {
			return
		}
		for i := len(e.desired) - 1; i >= 0; i-- {
			if d := e.desired[i]; d.Key == p.Gateway {
				p.Version = d.Version
				break
			}
		}
		e.publications = append(e.publications, p)
	}
}

func namespacedName(s string) types.NamespacedName {
	if ns, name, ok := strings.Cut(s, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Name: s}
}

// Of are the events of type t about Gateway gw, in order.
func (e *AgentEvents) Of(t agent.EventType, gw types.NamespacedName) []TimedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []TimedEvent
	for _, ev := range e.all {
		if ev.Type == t && ev.Key == gw {
			out = append(out, ev)
		}
	}
	return out
}

// Published is the publication of version of gw's configuration, if the
// manager logged one.
func (e *AgentEvents) Published(gw types.NamespacedName, version string) (Publication, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.publications {
		if p.Gateway == gw && p.Version == version {
			return p, true
		}
	}
	return Publication{}, false
}

// Confirmed is when gw's agent was first confirmed running the current
// configuration: it reported files that match it, or answered a push OK.
func (e *AgentEvents) Confirmed(gw types.NamespacedName) (time.Time, bool) {
	for _, ev := range e.Of(agent.EventFilesReported, gw) {
		if ev.Version != "" {
			return ev.At, true
		}
	}
	for _, ev := range e.Of(agent.EventApplyResult, gw) {
		if ev.Message == "OK" {
			return ev.At, true
		}
	}
	return time.Time{}, false
}

// WaitConfirmed waits up to timeout until gw's agent is Confirmed and
// returns how long after since that was; waiting says what for, in the
// failure.
func (e *AgentEvents) WaitConfirmed(t *testing.T, gw types.NamespacedName, since time.Time, timeout time.Duration, waiting string) time.Duration {
	t.Helper()
	var after time.Duration
	Eventually(t, timeout, func() error {
		at, ok := e.Confirmed(gw)
		if !ok {
			return errors.New(waiting)
		}
		after = at.Sub(since)
		return nil
	})
	return after
}
