package manager

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// TestLogEventsLeavesRefusalsToTheServer: protocol events are logged as
// "agent event" lines, except refusals, which any pod can send in a flood
// and which the agent server logs itself, sampled; every event still
// reaches the next observer.
func TestLogEventsLeavesRefusalsToTheServer(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	var passed []agent.EventType
	observe := logEvents(log, func(ev agent.Event) { passed = append(passed, ev.Type) })

	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	for range 100 {
		observe(agent.Event{Type: agent.EventRefused, Message: "token refused: unknown token"})
	}
	observe(agent.Event{Type: agent.EventPushSent, Key: pod, Pod: pod, Version: "v1"})

	if len(lines) != 1 || !strings.Contains(lines[0], `"type"="PushSent"`) {
		t.Fatalf("logged %q, want the push alone", lines)
	}
	if len(passed) != 101 {
		t.Fatalf("%d events reached the next observer, want all 101", len(passed))
	}
}
