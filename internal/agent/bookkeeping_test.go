package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"testing"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/datafile"
)

// These tests drive the Server's bookkeeping directly, as the RPC handlers
// do; test/agent drives it through the real agent.

type noAuth struct{}

func (noAuth) Authenticate(context.Context, string) (Identity, error) {
	return Identity{}, errors.New("not in unit tests")
}

// testServer is a Server whose clock the test moves.
type testServer struct {
	*Server
	mu      sync.Mutex
	clock   time.Time
	changes map[Key]int
}

func newTestServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	ts := &testServer{clock: time.Unix(1_000_000, 0), changes: map[Key]int{}}
	opts.Authenticator, opts.TLS = noAuth{}, &tls.Config{}
	opts.OnChange = func(k Key) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ts.changes[k]++
	}
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.clock
	}
	ts.Server = s
	return ts
}

func (ts *testServer) advance(d time.Duration) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.clock = ts.clock.Add(d)
}

func (ts *testServer) changed(k Key) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.changes[k]
}

// resource is what an agent reports: itself (agentPID) and NGINX (nginxPID,
// none when 0), in container resourceID.
func resource(resourceID string, agentPID, nginxPID int32) *mpi.Resource {
	r := &mpi.Resource{ResourceId: resourceID, Instances: []*mpi.Instance{{
		InstanceMeta:    &mpi.InstanceMeta{InstanceId: "agent-1", InstanceType: mpi.InstanceMeta_INSTANCE_TYPE_AGENT},
		InstanceRuntime: &mpi.InstanceRuntime{ProcessId: agentPID},
	}}}
	if nginxPID != 0 {
		r.Instances = append(r.Instances, &mpi.Instance{
			InstanceMeta:    &mpi.InstanceMeta{InstanceId: "nginx-1", InstanceType: mpi.InstanceMeta_INSTANCE_TYPE_NGINX},
			InstanceRuntime: &mpi.InstanceRuntime{ProcessId: nginxPID, ConfigPath: "/etc/nginx/nginx.conf"},
		})
	}
	return r
}

func conf(body string) []datafile.File {
	return []datafile.File{{Path: "/etc/nginx/nginx.conf", Data: []byte(body)}}
}

func answer(psh *push, st mpi.CommandResponse_CommandStatus, errText string) *mpi.DataPlaneResponse {
	return &mpi.DataPlaneResponse{
		MessageMeta:     &mpi.MessageMeta{CorrelationId: psh.correlationID},
		CommandResponse: &mpi.CommandResponse{Status: st, Error: errText},
		RequestType:     mpi.DataPlaneResponse_CONFIG_APPLY_REQUEST,
	}
}

// The Gateway and pod of the tests.
func testIDs() (Key, Identity) {
	gw := Key{Namespace: "ns", Name: "gw"}
	return gw, Identity{Pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}, Gateway: gw}
}

// connected returns a pod's stream, connected and past the overview gate.
func connected(t *testing.T, s *testServer, id Identity, res *mpi.Resource) *stream {
	t.Helper()
	s.connect(id, res)
	st, err := s.attach(id)
	if err != nil {
		t.Fatal(err)
	}
	s.overviewReported(id, nil)
	return st
}

func podStatus(t *testing.T, s *testServer, id Identity) PodStatus {
	t.Helper()
	for _, p := range s.Status(id.Gateway).Pods {
		if p.Pod == id.Pod {
			return p
		}
	}
	t.Fatalf("no pod %s in Status", id.Pod)
	return PodStatus{}
}

func TestOnePushInFlightThenTheNewest(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	st := connected(t, s, pod, resource("r", 10, 20))
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("a push without a configuration")
	}
	v1 := s.SetConfig(gw, conf("one"))
	req, p1 := s.takePush(st)
	if req == nil {
		t.Fatal("nothing pushed for a new configuration")
	}
	ov := req.GetConfigApplyRequest().GetOverview()
	if ov.GetConfigVersion().GetVersion() != v1 || ov.GetConfigVersion().GetInstanceId() != "nginx-1" ||
		req.GetMessageMeta().GetCorrelationId() != p1.correlationID || ov.GetConfigPath() != "/etc/nginx/nginx.conf" {
		t.Fatalf("push %v", req)
	}
	v2 := s.SetConfig(gw, conf("two"))
	v3 := s.SetConfig(gw, conf("three"))
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("a second push while one is in flight")
	}
	// v1's files stay while its push is in flight; v2 was never pushed: gone.
	if _, ok := s.file(gw, "/etc/nginx/nginx.conf", files.GenerateHash([]byte("one"))); !ok {
		t.Fatal("the in-flight version's file is gone")
	}
	if _, ok := s.file(gw, "/etc/nginx/nginx.conf", files.GenerateHash([]byte("two"))); ok {
		t.Fatalf("version %s, never pushed nor desired, is still kept", v2)
	}
	if got := podStatus(t, s, pod); got.State != Pending {
		t.Fatalf("status %+v while in flight", got)
	}

	if ev := s.finish(pod.Pod, answer(p1, mpi.CommandResponse_COMMAND_STATUS_OK, "")); ev == nil || ev.Version != v1 {
		t.Fatalf("final answer event %+v", ev)
	}
	if got := podStatus(t, s, pod); got.AppliedVersion != v1 || got.State != Pending {
		t.Fatalf("status %+v after v1 applied with v3 desired", got)
	}
	if _, ok := s.file(gw, "/etc/nginx/nginx.conf", files.GenerateHash([]byte("one"))); ok {
		t.Fatal("v1's file kept after its push completed")
	}
	req, p3 := s.takePush(st)
	if req == nil || p3.version.id != v3 {
		t.Fatalf("after the in-flight push, pushed %v; want the newest %s", req, v3)
	}
	s.finish(pod.Pod, answer(p3, mpi.CommandResponse_COMMAND_STATUS_OK, ""))
	if got := podStatus(t, s, pod); got.AppliedVersion != v3 || got.State != Applied || !got.Connected {
		t.Fatalf("status %+v, want v3 applied", got)
	}
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("an applied version pushed again")
	}
	if s.SetConfig(gw, conf("three")) != v3 {
		t.Fatal("identical content, other version")
	}
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("identical content pushed again")
	}
	time.Sleep(50 * time.Millisecond) // the notifier runs on its own goroutine
	if s.changed(gw) == 0 {
		t.Fatal("OnChange never called")
	}
}

func TestAnswers(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	st := connected(t, s, pod, resource("r", 10, 20))
	good := s.SetConfig(gw, conf("good"))
	_, p := s.takePush(st)
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_OK, ""))

	bad := s.SetConfig(gw, conf("bad"))
	_, p = s.takePush(st)
	if ev := s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_ERROR, "rolling back")); ev != nil {
		t.Fatal("ERROR taken as final: the agent sends FAILURE after rolling back")
	}
	if ev := s.finish(pod.Pod, &mpi.DataPlaneResponse{MessageMeta: &mpi.MessageMeta{CorrelationId: "other"},
		CommandResponse: &mpi.CommandResponse{Status: mpi.CommandResponse_COMMAND_STATUS_OK}}); ev != nil {
		t.Fatal("an answer to another request taken")
	}
	nginxSays := "failed validating config NGINX config test failed exit status 1: nginx: [emerg] unknown directive \"x\" in /etc/nginx/nginx.conf:1\nnginx: configuration file /etc/nginx/nginx.conf test failed\n"
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_FAILURE, nginxSays))
	got := podStatus(t, s, pod)
	want := PodStatus{Pod: pod.Pod, Connected: true, AppliedVersion: good, State: Failed,
		Message: `nginx: [emerg] unknown directive "x" in /etc/nginx/nginx.conf:1`, Failure: FailureRejected}
	if got != want {
		t.Fatalf("status %+v, want %+v", got, want)
	}
	s.advance(time.Hour)
	if req, _ := s.takePush(st); req != nil {
		t.Fatalf("version %s, which NGINX rejected, pushed again", bad)
	}

	// A failure that is not NGINX's verdict is retried with backoff.
	flaky := s.SetConfig(gw, conf("flaky"))
	_, p = s.takePush(st)
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_FAILURE, "error getting file data for /etc/nginx/nginx.conf: unavailable"))
	if got := podStatus(t, s, pod); got.State != Failed || got.Message == "" {
		t.Fatalf("status %+v after a transfer failure", got)
	}
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("retried at once")
	}
	s.advance(retryBase)
	if req, p := s.takePush(st); req == nil || p.version.id != flaky {
		t.Fatal("not retried after the backoff")
	}

	// A new configuration does not wait for the backoff of a failed one.
	_, p = s.takePush(st)
	if p != nil {
		t.Fatal("two pushes in flight")
	}
	s.Server.mu.Lock()
	inflight := st.pod.inflight
	s.Server.mu.Unlock()
	s.finish(pod.Pod, answer(inflight, mpi.CommandResponse_COMMAND_STATUS_FAILURE, "error getting file data: unavailable"))
	newer := s.SetConfig(gw, conf("newer"))
	if req, p := s.takePush(st); req == nil || p.version.id != newer {
		t.Fatal("a new configuration waited for the retry backoff of a failed one")
	}
}

func TestSessions(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{PushTimeout: 50 * time.Millisecond})
	st := connected(t, s, pod, resource("r", 10, 20))
	v1 := s.SetConfig(gw, conf("one"))
	_, p := s.takePush(st)
	s.finish(pod.Pod, answer(p, mpi.CommandResponse_COMMAND_STATUS_OK, ""))

	// The stream breaks and the same agent reconnects: nothing to push.
	s.detach(st)
	if got := podStatus(t, s, pod); got.Connected || got.State != Applied {
		t.Fatalf("status %+v of a disconnected pod", got)
	}
	s.connect(pod, resource("r", 10, 20))
	st, _ = s.attach(pod)
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("pushed again to the same agent and NGINX")
	}

	// An in-flight push survives a reconnection of the same agent.
	v2 := s.SetConfig(gw, conf("two"))
	_, p2 := s.takePush(st)
	st2, _ := s.attach(pod)
	select {
	case <-st.replaced:
	default:
		t.Fatal("the older stream was not told to end")
	}
	if req, _ := s.takePush(st2); req != nil {
		t.Fatal("pushed twice across a reconnection")
	}
	if ev := s.finish(pod.Pod, answer(p2, mpi.CommandResponse_COMMAND_STATUS_OK, "")); ev == nil {
		t.Fatal("the answer on the new stream was not taken")
	}

	// A new agent process (same NGINX): its predecessor's push is lost.
	s.SetConfig(gw, conf("three"))
	_, p3 := s.takePush(st2)
	s.connect(pod, resource("r", 11, 20))
	if st2.pod.inflight != nil {
		t.Fatal("the in-flight push of a dead agent is kept")
	}
	if ev := s.finish(pod.Pod, answer(p3, mpi.CommandResponse_COMMAND_STATUS_OK, "")); ev != nil {
		t.Fatal("an answer from the dead agent's push taken")
	}
	if got := podStatus(t, s, pod); got.AppliedVersion != v2 {
		t.Fatalf("status %+v: NGINX is the same, it runs %s", got, v2)
	}
	// The dead agent's stream is detached: the new agent subscribes anew.
	select {
	case <-st2.replaced:
	default:
		t.Fatal("the dead agent's stream was not told to end")
	}
	st2, _ = s.attach(pod)
	if req, _ := s.takePush(st2); req != nil {
		t.Fatal("pushed to a new agent before it reported its files")
	}
	s.overviewReported(pod, nil)
	if req, _ := s.takePush(st2); req == nil {
		t.Fatal("nothing pushed to the new agent")
	}

	// The push is never answered: after PushTimeout it is sent again.
	first := st2.pod.inflight.correlationID
	waitUntil(t, func() bool {
		s.Server.mu.Lock()
		defer s.Server.mu.Unlock()
		return st2.pod.inflight == nil
	})
	req, p4 := s.takePush(st2)
	if req == nil || p4.correlationID == first {
		t.Fatal("an unanswered push was not sent again")
	}

	// A new container: what NGINX runs is unknown.
	s.connect(pod, resource("r2", 10, 20))
	if got := podStatus(t, s, pod); got.AppliedVersion != "" || v1 == "" {
		t.Fatalf("status %+v of a new container", got)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNoPushWithoutNGINXOrConfig(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{})
	st := connected(t, s, pod, resource("r", 10, 0))
	s.SetConfig(gw, conf("one"))
	if req, _ := s.takePush(st); req != nil {
		t.Fatal("pushed before the agent found NGINX")
	}
	s.connect(pod, resource("r", 10, 20)) // UpdateDataPlaneStatus: NGINX found
	if req, _ := s.takePush(st); req == nil {
		t.Fatal("nothing pushed once NGINX is found")
	}

	other := Identity{Pod: types.NamespacedName{Namespace: "ns", Name: "x-0"}, Gateway: Key{Namespace: "ns", Name: "x"}}
	st2 := connected(t, s, other, resource("r3", 10, 20))
	if req, _ := s.takePush(st2); req != nil {
		t.Fatal("pushed a Gateway without configuration")
	}
	s.DeleteConfig(gw)
	if v := s.Status(gw).Version; v != "" {
		t.Fatalf("version %q after DeleteConfig", v)
	}
	if _, err := s.attach(Identity{Pod: types.NamespacedName{Name: "never-connected"}, Gateway: gw}); err == nil {
		t.Fatal("Subscribe without CreateConnection accepted")
	}
}

func TestDisconnectedPodsAreForgotten(t *testing.T) {
	gw, pod := testIDs()
	s := newTestServer(t, Options{PodTTL: 20 * time.Millisecond})
	st := connected(t, s, pod, resource("r", 10, 20))
	time.Sleep(60 * time.Millisecond)
	if len(s.Status(gw).Pods) != 1 {
		t.Fatal("a connected pod was forgotten")
	}
	s.detach(st)
	waitUntil(t, func() bool { return len(s.Status(gw).Pods) == 0 })
}

func TestStatusSorted(t *testing.T) {
	gw, _ := testIDs()
	s := newTestServer(t, Options{})
	for _, n := range []string{"c", "a", "b"} {
		connected(t, s, Identity{Pod: types.NamespacedName{Namespace: "ns", Name: n}, Gateway: gw}, resource("r-"+n, 1, 2))
	}
	var names []string
	for _, p := range s.Status(gw).Pods {
		names = append(names, p.Pod.Name)
	}
	if len(names) != 3 || names[0] != "a" || names[1] != "b" || names[2] != "c" {
		t.Fatalf("pods %v, want sorted", names)
	}
}

// TestReconnectWithIdenticalFilesIsApplied: an agent that reconnects with
// exactly the desired files (the manager restarted) counts as applied at
// once, and nothing is pushed to it.
func TestReconnectWithIdenticalFilesIsApplied(t *testing.T) {
	files := []datafile.File{{Path: "/etc/nginx/nginx.conf", Data: []byte("events {}\n")}}
	v, err := newVersion(files)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFiles(v.files, v.files) {
		t.Fatal("a version's files differ from themselves")
	}
	other, _ := newVersion([]datafile.File{{Path: "/etc/nginx/nginx.conf", Data: []byte("events { worker_connections 8; }\n")}})
	if sameFiles(v.files, other.files) {
		t.Fatal("files with other contents compare equal")
	}
	more, _ := newVersion(append(files, datafile.File{Path: "/etc/nginx/extra.conf", Data: []byte("#\n")}))
	if sameFiles(v.files, more.files) || sameFiles(more.files, v.files) {
		t.Fatal("file sets of different sizes compare equal")
	}
}
