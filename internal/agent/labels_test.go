package agent

import (
	"strings"
	"testing"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// agentResource is a Resource whose agent has labels (values as the agent
// typed them).
func agentResource(labels map[string]any) *mpi.Resource {
	structs, err := mpi.ConvertToStructs(labels)
	if err != nil {
		panic(err)
	}
	return &mpi.Resource{Instances: []*mpi.Instance{{
		InstanceMeta:   &mpi.InstanceMeta{InstanceType: mpi.InstanceMeta_INSTANCE_TYPE_AGENT},
		InstanceConfig: &mpi.InstanceConfig{Config: &mpi.InstanceConfig_AgentConfig{AgentConfig: &mpi.AgentConfig{Labels: structs}}},
	}}}
}

func TestCheckLabels(t *testing.T) {
	gw := Key{Namespace: "team-a", Name: "gw"}
	for _, c := range []struct {
		name   string
		labels map[string]any
		gw     Key
		err    string
	}{
		{"match", map[string]any{LabelGatewayName: "gw", LabelGatewayNamespace: "team-a"}, gw, ""},
		{"other name", map[string]any{LabelGatewayName: "gw2", LabelGatewayNamespace: "team-a"}, gw, "names another Gateway"},
		{"other namespace", map[string]any{LabelGatewayName: "gw", LabelGatewayNamespace: "team-b"}, gw, "names another Gateway"},
		{"missing", map[string]any{LabelGatewayName: "gw"}, gw, "lacks the label " + LabelGatewayNamespace},
		// The agent types label values that look like numbers or booleans.
		{"numeric name", map[string]any{LabelGatewayName: 42, LabelGatewayNamespace: "team-a"}, Key{Namespace: "team-a", Name: "42"}, ""},
		{"numeric mismatch", map[string]any{LabelGatewayName: 42, LabelGatewayNamespace: "team-a"}, Key{Namespace: "team-a", Name: "43"}, "names another Gateway"},
		{"float name", map[string]any{LabelGatewayName: 1e5, LabelGatewayNamespace: "team-a"}, Key{Namespace: "team-a", Name: "1e5"}, ""},
		{"bool name", map[string]any{LabelGatewayName: true, LabelGatewayNamespace: "team-a"}, Key{Namespace: "team-a", Name: "true"}, ""},
		{"nil name", map[string]any{LabelGatewayName: nil, LabelGatewayNamespace: "team-a"}, Key{Namespace: "team-a", Name: "nil"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkLabels(agentResource(c.labels), c.gw)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("got %v, want %q", err, c.err)
			}
		})
	}
	if err := checkLabels(&mpi.Resource{}, gw); err == nil {
		t.Fatal("a resource without agent instance accepted")
	}
	if labelEquals(structpb.NewListValue(&structpb.ListValue{}), "gw") {
		t.Fatal("a list matched a name")
	}
}

func TestNGINXMessage(t *testing.T) {
	for _, c := range []struct{ agent, want string }{
		{
			"failed validating config NGINX config test failed exit status 1: nginx: [emerg] unknown directive \"x\" in /etc/nginx/nginx.conf:3\nnginx: configuration file /etc/nginx/nginx.conf test failed\n",
			`nginx: [emerg] unknown directive "x" in /etc/nginx/nginx.conf:3`,
		},
		{
			"failed to reload NGINX 2026/11/22 11:51:45 [emerg] 14#14: bind() to 127.0.0.5:80 failed (98: Address already in use)",
			"2026/11/22 11:51:45 [emerg] 14#14: bind() to 127.0.0.5:80 failed (98: Address already in use)",
		},
		{ // NGINX retrying bind(), a second later
			"failed to reload NGINX 2026/11/22 11:51:45 [emerg] 14#14: bind() to 127.0.0.5:80 failed (98: Address already in use)\n" +
				"2026/11/22 11:51:46 [emerg] 14#14: bind() to 127.0.0.5:80 failed (98: Address already in use)",
			"2026/11/22 11:51:45 [emerg] 14#14: bind() to 127.0.0.5:80 failed (98: Address already in use)",
		},
		{"error getting file data: unavailable", "error getting file data: unavailable"},
	} {
		if got := nginxMessage(&mpi.CommandResponse{Error: c.agent}); got != c.want {
			t.Errorf("nginxMessage(%q) = %q, want %q", c.agent, got, c.want)
		}
		if isNGINXVerdict(c.want) != strings.Contains(c.want, "[emerg]") {
			t.Errorf("isNGINXVerdict(%q) wrong", c.want)
		}
	}
}
