package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/localrun"
)

// events records the agent server's protocol events, read from the
// manager's log (the test runtime runs it at the verbosity that logs them,
// manager.AgentEventsVerbosity).
type events struct {
	mu  sync.Mutex
	all []timedEvent
}

type timedEvent struct {
	at time.Time
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

// watchEvents follows the log of the manager pod that leads now (it holds
// the leader Lease), from since, until the test ends.
func watchEvents(t *testing.T, since time.Time) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	leader := leaderName(ctx)
	if leader == "" {
		t.Fatal("no manager pod holds the leader Lease")
	}
	stream, err := rt.Clientset.CoreV1().Pods(localrun.ManagerNamespace).GetLogs(leader, &corev1.PodLogOptions{
		Follow: true, SinceTime: &metav1.Time{Time: since.Add(-time.Second)},
	}).Stream(ctx)
	if err != nil {
		t.Fatalf("following the manager's log: %v", err)
	}
	e := &events{}
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
			e.all = append(e.all, timedEvent{l.TS, agent.Event{
				Type: agent.EventType(l.Type), Key: namespacedName(l.Gateway), Pod: namespacedName(l.Pod),
				Version: l.Version, Path: l.Path, Message: l.Message,
			}})
			e.mu.Unlock()
		}
	}()
	return e
}

func namespacedName(s string) types.NamespacedName {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return types.NamespacedName{Namespace: s[:i], Name: s[i+1:]}
		}
	}
	return types.NamespacedName{Name: s}
}

func (e *events) of(t agent.EventType, gw types.NamespacedName) []timedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []timedEvent
	for _, ev := range e.all {
		if ev.Type == t && ev.Key == gw {
			out = append(out, ev)
		}
	}
	return out
}

// confirmed is when gw's agent was first confirmed running the current
// configuration: it reported files that match it, or answered a push OK.
func (e *events) confirmed(gw types.NamespacedName) (time.Time, bool) {
	for _, ev := range e.of(agent.EventFilesReported, gw) {
		if ev.Version != "" {
			return ev.at, true
		}
	}
	for _, ev := range e.of(agent.EventApplyResult, gw) {
		if ev.Message == "OK" {
			return ev.at, true
		}
	}
	return time.Time{}, false
}
