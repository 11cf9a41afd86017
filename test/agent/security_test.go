package agente2e

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/datafile"
)

// TestAgentWithBadTokenRefused: the real agent with a token the
// Authenticator refuses never connects, and learns why.
func TestAgentWithBadTokenRefused(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}, gateway: key, token: "stolen"})
	dp.start()
	waitFor(t, 20*time.Second, "the refusal", func() (bool, string) {
		return len(cp.events.of(agent.EventRefused)) > 0 && strings.Contains(dp.out.String(), "code = Unauthenticated desc = token refused"), ""
	})
	if msg := cp.events.of(agent.EventRefused)[0].Message; !strings.Contains(msg, "token refused: unknown token") {
		t.Fatalf("refusal %q does not say why", msg)
	}
	if !strings.Contains(cp.logs.String(), "Refused an agent") {
		t.Fatal("the refusal is not logged")
	}
	if pods := cp.srv.Status(key).Pods; len(pods) != 0 {
		t.Fatalf("a refused agent shows in Status: %+v", pods)
	}
}

// TestTokenRotation: the kubelet refreshes the projected token; the agent
// notices, reconnects with the new one, and keeps working once the old one
// is no longer accepted.
func TestTokenRotation(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	cp.admit("first", pod, key)
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key, token: "first"})
	port := freePort(t, dp.ip)
	dp.start()
	cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "first")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)

	cp.admit("second", pod, key)
	dp.writeToken("second")
	waitFor(t, 20*time.Second, "the agent to reconnect with the new token", func() (bool, string) {
		return strings.Contains(dp.out.String(), "Credential watcher has detected changes"), ""
	})
	cp.auth.mu.Lock()
	delete(cp.auth.tokens, "first")
	cp.auth.mu.Unlock()
	time.Sleep(3 * time.Second) // the agent swaps connections asynchronously

	v := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "second")))
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "second", 5*time.Second)
}

// TestAgentLabelsNameAnotherGateway: an agent whose labels name another
// Gateway than its pod serves is refused.
func TestAgentLabelsNameAnotherGateway(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	dp := newDataPlane(t, cp, dataPlaneOptions{
		pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}, gateway: key,
		labelGateway: agent.Key{Namespace: "ns", Name: "someone-else"},
	})
	dp.start()
	waitFor(t, 20*time.Second, "the refusal", func() (bool, string) {
		return strings.Contains(dp.out.String(), "code = PermissionDenied"), ""
	})
	ev := cp.events.of(agent.EventRefused)
	if len(ev) == 0 || !strings.Contains(ev[0].Message, "names another Gateway") {
		t.Fatalf("refusals %+v, want one naming the Gateway mismatch", ev)
	}
	if pods := cp.srv.Status(key).Pods; len(pods) != 0 {
		t.Fatalf("a refused agent shows in Status: %+v", pods)
	}
}

// rawClient is a bare mpi.v1 client: for the refusals the real agent cannot be
// made to provoke.
type rawClient struct {
	conn *grpc.ClientConn
	cmd  mpi.CommandServiceClient
	file mpi.FileServiceClient
}

func dial(t *testing.T, cp *controlPlane, tlsConfig *tls.Config) *rawClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = credentials.NewTLS(tlsConfig)
	}
	conn, err := grpc.NewClient(cp.addr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &rawClient{conn: conn, cmd: mpi.NewCommandServiceClient(conn), file: mpi.NewFileServiceClient(conn)}
}

func (cp *controlPlane) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: cp.ca.pool, ServerName: serverName, MinVersion: tls.VersionTLS13}
}

func withToken(t *testing.T, token string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "authorization", token, "uuid", "test-client")
}

func wantCode(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("%s: got %v, want %v with %q", what, err, code, msg)
	}
}

// resource is what an agent of gateway sends in CreateConnection.
func resource(gateway agent.Key) *mpi.Resource {
	label := func(k, v string) *structpb.Struct {
		s, _ := structpb.NewStruct(map[string]any{k: v})
		return s
	}
	return &mpi.Resource{ResourceId: "00000000-0000-0000-0000-000000000001", Instances: []*mpi.Instance{{
		InstanceMeta: &mpi.InstanceMeta{InstanceId: "00000000-0000-0000-0000-000000000002", InstanceType: mpi.InstanceMeta_INSTANCE_TYPE_AGENT},
		InstanceConfig: &mpi.InstanceConfig{Config: &mpi.InstanceConfig_AgentConfig{AgentConfig: &mpi.AgentConfig{
			Labels: []*structpb.Struct{label(agent.LabelGatewayName, gateway.Name), label(agent.LabelGatewayNamespace, gateway.Namespace)},
		}}},
	}}}
}

// TestRPCRefusals: every way in without the right credentials is refused with
// a status saying why; an agent reads only its own Gateway's files.
func TestRPCRefusals(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	other := agent.Key{Namespace: "ns", Name: "other"}
	cp.admit("good", types.NamespacedName{Namespace: "ns", Name: "gw-0"}, key)
	c := dial(t, cp, cp.clientTLS())

	_, err := c.cmd.CreateConnection(context.Background(), &mpi.CreateConnectionRequest{Resource: resource(key)})
	wantCode(t, "no token", err, codes.Unauthenticated, "no token")
	_, err = c.cmd.CreateConnection(withToken(t, "bad"), &mpi.CreateConnectionRequest{Resource: resource(key)})
	wantCode(t, "bad token", err, codes.Unauthenticated, "token refused: unknown token")
	// nginx-agent gives up on Unauthenticated and retries Unavailable: a
	// refusal that may pass later must say Unavailable.
	_, err = c.cmd.CreateConnection(withToken(t, "later-1"), &mpi.CreateConnectionRequest{Resource: resource(key)})
	wantCode(t, "API server unavailable", err, codes.Unavailable, "the API server is unavailable")
	_, err = c.cmd.CreateConnection(withToken(t, "good"), &mpi.CreateConnectionRequest{Resource: resource(other)})
	wantCode(t, "labels of another Gateway", err, codes.PermissionDenied, "names another Gateway")
	_, err = c.cmd.CreateConnection(withToken(t, "good"), &mpi.CreateConnectionRequest{Resource: &mpi.Resource{}})
	wantCode(t, "no labels", err, codes.PermissionDenied, "no agent instance")
	sub, err := c.cmd.Subscribe(withToken(t, "good"))
	if err == nil {
		_, err = sub.Recv()
	}
	wantCode(t, "Subscribe before CreateConnection", err, codes.FailedPrecondition, "CreateConnection first")
	if _, err := c.cmd.CreateConnection(withToken(t, "good"), &mpi.CreateConnectionRequest{Resource: resource(key)}); err != nil {
		t.Fatalf("CreateConnection with a good token and labels: %v", err)
	}

	secret := []byte("other Gateway's key")
	cp.srv.SetConfig(other, []datafile.File{{Path: "/etc/nginx/secrets/k.pem", Data: secret, Mode: 0o600}})
	own := []byte("own")
	cp.srv.SetConfig(key, []datafile.File{{Path: "/etc/nginx/nginx.conf", Data: own}})
	get := func(name string, data []byte) error {
		_, err := c.file.GetFile(withToken(t, "good"), &mpi.GetFileRequest{FileMeta: &mpi.FileMeta{Name: name, Hash: files.GenerateHash(data)}})
		return err
	}
	wantCode(t, "another Gateway's file", get("/etc/nginx/secrets/k.pem", secret), codes.NotFound, "not part of any configuration of Gateway ns/gw")
	if err := get("/etc/nginx/nginx.conf", own); err != nil {
		t.Fatalf("own file: %v", err)
	}
	wantCode(t, "own file, stale hash", get("/etc/nginx/nginx.conf", []byte("old")), codes.NotFound, "not part of any configuration")
	_, err = c.file.UpdateFile(withToken(t, "good"), &mpi.UpdateFileRequest{})
	wantCode(t, "UpdateFile", err, codes.Unimplemented, "does not accept files")

	// Transport: plaintext and TLS 1.2 never get as far as an RPC.
	_, err = dial(t, cp, nil).cmd.CreateConnection(withToken(t, "good"), &mpi.CreateConnectionRequest{Resource: resource(key)})
	wantCode(t, "plaintext", err, codes.Unavailable, "")
	tls12 := cp.clientTLS()
	tls12.MinVersion, tls12.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	if conn, err := tls.Dial("tcp", cp.addr(), tls12); err == nil {
		_ = conn.Close()
		t.Fatal("a TLS 1.2 handshake succeeded")
	}
	if conn, err := tls.Dial("tcp", cp.addr(), cp.clientTLS()); err != nil {
		t.Fatalf("TLS 1.3 handshake: %v", err)
	} else {
		_ = conn.Close()
	}
	if !strings.Contains(cp.logs.String(), "TLS handshake failed") {
		t.Fatal("refused handshakes are not logged")
	}
}

// TestCertificateRotation: a certificate written over the files is served to
// the next connections without a restart, and agents connect with it.
func TestCertificateRotation(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	serial := func() int64 {
		conn, err := tls.Dial("tcp", cp.addr(), cp.clientTLS())
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if s := serial(); s != 1 {
		t.Fatalf("serving certificate %d, want 1", s)
	}
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	cp.rotateCert(2)
	if s := serial(); s != 2 {
		t.Fatalf("serving certificate %d after rotation, want 2", s)
	}

	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	v := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "rotated")))
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
	}
}
