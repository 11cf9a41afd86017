package agent

import (
	"testing"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
)

// TestNewAgentProcessDetachesTheOldStream: when a new agent process of the
// pod connects before the server has seen the old one's stream end, the old
// stream is told to end and is sent nothing more; the new agent's stream
// gets the push.
func TestNewAgentProcessDetachesTheOldStream(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	old := connected(t, s, pod, resource("c1", 10, 20))
	s.SetConfig(gw, conf("one"))
	_, p := s.takePush(old)
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_OK, ""))

	v2 := s.SetConfig(gw, conf("two"))
	s.connect(pod, resource("c1", 11, 20)) // the agent restarted; its old stream lingers
	s.overviewReported(pod, nil)
	select {
	case <-old.replaced:
	default:
		t.Fatal("the dead agent's stream was not told to end")
	}
	if got := podStatus(t, s, pod); got.Connected {
		t.Fatalf("status %+v: the new agent has no stream yet", got)
	}
	if req, _ := s.takePush(old); req != nil {
		t.Fatal("a push was sent on the dead agent's stream")
	}
	st, err := s.attach(pod)
	if err != nil {
		t.Fatal(err)
	}
	if req, p := s.takePush(st); req == nil || p.version.id != v2 {
		t.Fatal("the new agent's stream was not sent the push")
	}
	s.detach(old) // the old stream's handler returns: no effect on the new one
	if got := podStatus(t, s, pod); !got.Connected {
		t.Fatalf("status %+v: the old stream's end detached the new one", got)
	}
}

// hasFile says whether the server still serves key's nginx.conf with body.
func hasFile(s *testServer, body string) bool {
	gw, _ := testIDs()
	_, ok := s.file(gw, "/etc/nginx/nginx.conf", files.GenerateHash([]byte(body)))
	return ok
}

// TestAbandonedPushKeepsItsFiles: a push given up on (no answer within
// PushTimeout) is sent again or replaced by a newer one, but the agent may
// still be fetching its files: they stay until a later push is answered,
// or until its own late answer arrives.
func TestAbandonedPushKeepsItsFiles(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{PushTimeout: 20 * time.Millisecond})
	st := connected(t, s, pod, resource("r", 10, 20))
	s.SetConfig(gw, conf("one"))
	_, p1 := s.takePush(st)
	waitUntil(t, func() bool {
		s.Server.mu.Lock()
		defer s.Server.mu.Unlock()
		return st.pod.inflight == nil
	})
	v2 := s.SetConfig(gw, conf("two"))
	if !hasFile(s, "one") {
		t.Fatal("the files of a push that timed out were released while the agent may still fetch them")
	}
	_, p2 := s.takePush(st)
	if p2 == nil || p2.version.id != v2 {
		t.Fatal("the newer configuration was not pushed after the timeout")
	}
	// A late answer to the abandoned push changes no status but frees its files.
	if ev := s.finish(pod.Pod, answer(p1, mpi.CommandResponse_COMMAND_STATUS_OK, "")); ev != nil {
		t.Fatalf("a late answer to an abandoned push was taken as the in-flight one's: %+v", ev)
	}
	if hasFile(s, "one") {
		t.Fatal("the abandoned push's files were kept after its own answer")
	}
	if ev := s.finish(pod.Pod, answer(p2, mpi.CommandResponse_COMMAND_STATUS_OK, "")); ev == nil {
		t.Fatal("the answer to the in-flight push was not taken")
	}

	// Abandoned twice, then a newer push is answered: both are released.
	s.SetConfig(gw, conf("three"))
	_, p3 := s.takePush(st)
	s.unsent(st.pod, p3) // Send failed: part of it may have reached the agent
	if !hasFile(s, "three") {
		t.Fatal("the files of a push whose Send failed were released")
	}
	s.SetConfig(gw, conf("four"))
	_, p4 := s.takePush(st)
	if p4 == nil {
		t.Fatal("nothing pushed after a failed Send")
	}
	s.finish(pod.Pod, answer(p4, mpi.CommandResponse_COMMAND_STATUS_OK, ""))
	if hasFile(s, "three") {
		t.Fatal("an abandoned push's files were kept after a newer push was answered")
	}
	if !hasFile(s, "four") {
		t.Fatal("the desired version's files are gone")
	}
}

// TestAbandonedPushFilesGoWithTheAgent: the files of an abandoned push are
// released when its agent process goes, and at most maxStale are kept.
func TestAbandonedPushFilesGoWithTheAgent(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	st := connected(t, s, pod, resource("r", 10, 20))
	bodies := []string{"a", "b", "c", "d", "e", "f"}
	for _, b := range bodies {
		s.SetConfig(gw, conf(b))
		_, p := s.takePush(st)
		if p == nil {
			t.Fatalf("nothing pushed for %s", b)
		}
		s.unsent(st.pod, p)
	}
	for i, b := range bodies[:len(bodies)-1] {
		if kept, want := hasFile(s, b), i >= len(bodies)-maxStale; kept != want {
			t.Errorf("version %q kept: %v, want %v (at most %d abandoned pushes are kept)", b, kept, want, maxStale)
		}
	}
	s.connect(pod, resource("r", 11, 20)) // a new agent process
	for _, b := range bodies[:len(bodies)-1] {
		if hasFile(s, b) {
			t.Errorf("version %q kept after its agent process went", b)
		}
	}
	if !hasFile(s, "f") {
		t.Fatal("the desired version's files are gone")
	}
}

// TestRollbackFailureIsNotALastGoodConfiguration: when the agent could not
// roll back, the pod's status does not claim it runs its last good version.
func TestRollbackFailureIsNotALastGoodConfiguration(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	st := connected(t, s, pod, resource("r", 10, 20))
	s.SetConfig(gw, conf("good"))
	_, p := s.takePush(st)
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_OK, ""))

	for _, tc := range []struct {
		body, message, errText string
		want                   Failure
		applied                bool
	}{
		{"rejected", "Config apply failed, rollback successful", "nginx: [emerg] unknown directive \"x\"", FailureRejected, true},
		{"unfetched", "Config apply failed, rollback successful", "error getting file data: unavailable", FailureRetrying, true},
		// The rollback's watch of the error log read the failed reload's
		// bind() retries: NGINX kept the last good configuration.
		{"echoed", "Config apply failed, rollback failed", "config apply error: failed to reload NGINX " + bindLine("23:43:35") +
			"\nrollback error: failed to reload NGINX " + bindLine("23:43:36"), FailureRejected, true},
		{"rollback's own", "Config apply failed, rollback failed", "config apply error: failed to reload NGINX " + bindLine("23:43:35") +
			"\nrollback error: failed to reload NGINX 2026/11/24 23:43:36 [alert] 15#15: other", FailureRollbackFailed, false},
		{"broken", "Config apply failed, rollback failed", "config apply error: nginx: [emerg] bad\nrollback error: no such file", FailureRollbackFailed, false},
	} {
		s.SetConfig(gw, conf(tc.body))
		s.advance(time.Hour) // past any retry backoff
		_, p := s.takePush(st)
		if p == nil {
			t.Fatalf("%s: nothing pushed", tc.body)
		}
		r := answer(p, mpi.CommandResponse_COMMAND_STATUS_FAILURE, tc.errText)
		r.CommandResponse.Message = tc.message
		s.finish(pod.Pod, r)
		got := podStatus(t, s, pod)
		if got.State != Failed || got.Failure != tc.want || (got.AppliedVersion != "") != tc.applied {
			t.Errorf("%s: status %+v, want Failed/%s with applied version kept: %v", tc.body, got, tc.want, tc.applied)
		}
		if tc.body == "echoed" && got.Message != bindLine("23:43:35") {
			t.Errorf("echoed: message %q, want NGINX's line once", got.Message)
		}
	}
}

func bindLine(at string) string {
	return "2026/11/24 " + at + " [emerg] 15#15: bind() to 127.0.0.5:80 failed (98: Address already in use)"
}
