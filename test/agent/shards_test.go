package agente2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// shardedConf is nginx.conf including every shard of config.ServerShardsDir,
// as a large Gatewall configuration does; shard 0 is a server answering
// body, the others hold a map each.
func shardedConf(ip string, port int, body string) []datafile.File {
	var inc strings.Builder
	for i := range config.ServerShards {
		fmt.Fprintf(&inc, "    include %s;\n", config.ServerShardPath(i))
	}
	fs := mainConf(inc.String())
	for i := range config.ServerShards {
		data := fmt.Sprintf("map $uri $gatewall_shard_%d { default %d; }\n", i, i)
		if i == 0 {
			data = site(ip, port, body)
		}
		fs = append(fs, datafile.File{Path: config.ServerShardPath(i), Data: []byte(data), Mode: 0o644})
	}
	return fs
}

// TestShardedServers: nginx-agent writes server shards into their own
// directory, and a change to one shard makes it fetch that file alone.
func TestShardedServers(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "team-s", Name: "gw"}
	pod := types.NamespacedName{Namespace: "team-s", Name: "gw-nginx-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	cp.waitPod(key, pod, agent.Pending, applyTimeout)

	v1 := cp.srv.SetConfig(key, shardedConf(dp.ip, port, "one"))
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v1 {
		t.Fatalf("applied %+v, want version %s", st, v1)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "one", 5*time.Second)
	first := len(cp.events.of(agent.EventFileServed))
	if first < config.ServerShards {
		t.Fatalf("the agent fetched %d files for the first configuration, want every shard (%d) and nginx.conf", first, config.ServerShards)
	}

	v2 := cp.srv.SetConfig(key, shardedConf(dp.ip, port, "two"))
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v2 {
		t.Fatalf("applied %+v, want version %s", st, v2)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "two", 5*time.Second)
	var fetched []string
	for _, e := range cp.events.of(agent.EventFileServed)[first:] {
		fetched = append(fetched, e.Path)
	}
	if len(fetched) != 1 || fetched[0] != config.ServerShardPath(0) {
		t.Fatalf("after a change to shard 0 the agent fetched %v, want %s alone", fetched, config.ServerShardPath(0))
	}
}
