package testenv

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// TestRecordPublications reads lines as the manager logs them (zap's JSON,
// --zap-time-encoding=rfc3339nano): a publication takes the agent server's
// version of the configuration from the line before it about the same
// Gateway, so that it can be matched with the push that carries it.
func TestRecordPublications(t *testing.T) {
	since := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	e := &AgentEvents{}
	for _, l := range []string{
		`{"level":"debug","ts":"2026-11-25T10:00:00.100Z","logger":"agent-server","msg":"Desired configuration set","gateway":{"name":"gw","namespace":"ns"},"version":"v1","files":4}`,
		`{"level":"debug","ts":"2026-11-25T10:00:00.101Z","logger":"agent-server","msg":"Desired configuration set","gateway":{"name":"other","namespace":"ns"},"version":"o1","files":4}`,
		`{"level":"debug","ts":"2026-11-25T10:00:00.102Z","msg":"configuration published","controller":"gateway","Gateway":{"name":"gw","namespace":"ns"},"namespace":"ns","name":"gw","version":"c1","routes":3,"snapshot":"1.5ms","translation":"90ms","published":"92.5ms"}`,
		`{"level":"info","ts":"2026-11-25T10:00:00.103Z","msg":"agent event","type":"PushSent","gateway":"ns/gw","pod":"ns/gw-0","version":"v1"}`,
		`not JSON`,
	} {
		e.record([]byte(l), since)
	}
	gw := types.NamespacedName{Namespace: "ns", Name: "gw"}
	p, ok := e.Published(gw, "v1")
	if !ok {
		t.Fatalf("no publication of v1 recorded: %+v", e.publications)
	}
	want := Publication{At: time.Date(2026, 11, 25, 10, 0, 0, 102e6, time.UTC), Gateway: gw, Version: "v1",
		Snapshot: 1500 * time.Microsecond, Translation: 90 * time.Millisecond, Took: 92500 * time.Microsecond}
	if p != want {
		t.Errorf("publication %+v, want %+v", p, want)
	}
	if _, ok := e.Published(gw, "o1"); ok {
		t.Error("a publication took another Gateway's version")
	}
	if pushes := e.Of(agent.EventPushSent, gw); len(pushes) != 1 || pushes[0].Version != "v1" {
		t.Errorf("push events %+v, want one of v1", pushes)
	}
}
