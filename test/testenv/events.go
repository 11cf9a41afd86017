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
	mu  sync.Mutex
	all []TimedEvent
}

// TimedEvent is an agent event and when the manager logged it.
type TimedEvent struct {
	At time.Time
	agent.Event
}

// logLine is what the manager logs of an agent event (zap's JSON).
type logLine struct {
	TS      time.Time `json:"ts"`
	Msg     string    `json:"msg"`
	Type    string    `json:"type"`
	Gateway string    `json:"gateway"`
	Pod     string    `json:"pod"`
	Version string    `json:"version"`
	Path    string    `json:"path"`
	Message string    `json:"message"`
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
			var l logLine
			if json.Unmarshal(s.Bytes(), &l) != nil || l.Msg != "agent event" || l.TS.Before(since) {
				continue
			}
			e.mu.Lock()
			e.all = append(e.all, TimedEvent{l.TS, agent.Event{
				Type: agent.EventType(l.Type), Key: namespacedName(l.Gateway), Pod: namespacedName(l.Pod),
				Version: l.Version, Path: l.Path, Message: l.Message,
			}})
			e.mu.Unlock()
		}
	}()
	return e
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
