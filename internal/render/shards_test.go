package render_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/confcheck"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// gatewayFiles translates ns0/gw of scaleInput(1, listeners, routes).
func gatewayFiles(t *testing.T, listeners, routes int) map[string][]byte {
	t.Helper()
	tr := translate.Gateway(scaleInput(1, listeners, routes), types.NamespacedName{Namespace: "ns0", Name: "gw"})
	if tr == nil || tr.Files == nil {
		t.Fatal("the Gateway is not translated")
	}
	out := map[string][]byte{}
	for _, f := range tr.Files {
		out[f.Path] = f.Data
	}
	return out
}

// TestServerShards: past config.ShardServersAbove server blocks,
// servers.conf includes every shard and each server block is in the shard
// of its name, once; adding a route with a new hostname changes that
// hostname's shard and no other file of server blocks; the configuration
// passes Gatewall's own checks and `nginx -t`. Smaller configurations keep servers.conf alone.
func TestServerShards(t *testing.T) {
	small := gatewayFiles(t, 4, 50)
	for p := range small {
		if strings.HasPrefix(p, config.ServerShardsDir) {
			t.Fatalf("50 routes: shard %s rendered, want servers.conf alone", p)
		}
	}
	if !bytes.Contains(small[config.ServersConfPath], []byte("server_name r49.zone1.example.com;")) {
		t.Fatal("50 routes: servers.conf lacks a route's server block")
	}

	const routes = 400
	before := gatewayFiles(t, 4, routes)
	servers := string(before[config.ServersConfPath])
	for i := 0; i < config.ServerShards; i++ {
		if !strings.Contains(servers, "include "+config.ServerShardPath(i)+";") {
			t.Fatalf("servers.conf does not include shard %d:\n%s", i, servers)
		}
		if before[config.ServerShardPath(i)] == nil {
			t.Fatalf("shard %d is not rendered", i)
		}
	}
	if strings.Contains(servers, "server_name r") {
		t.Fatal("servers.conf holds route server blocks, want them in the shards")
	}
	for r := 0; r < routes; r++ {
		host := fmt.Sprintf("r%d.zone%d.example.com", r, r%4)
		line := []byte("server_name " + host + ";")
		for i := 0; i < config.ServerShards; i++ {
			n := bytes.Count(before[config.ServerShardPath(i)], line)
			if want := map[bool]int{true: 1, false: 0}[i == config.ServerShard(host)]; n != want {
				t.Fatalf("%s: %d server blocks in shard %d, want %d (its shard is %d)", host, n, i, want, config.ServerShard(host))
			}
		}
	}

	after := gatewayFiles(t, 4, routes+1)
	var changed []string
	for p, data := range after {
		if !bytes.Equal(before[p], data) {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	newHost := fmt.Sprintf("r%d.zone%d.example.com", routes, routes%4)
	shard := config.ServerShardPath(config.ServerShard(newHost))
	for _, p := range changed {
		if (p == config.ServersConfPath || strings.HasPrefix(p, config.ServerShardsDir)) && p != shard {
			t.Errorf("one more route (%s) changed %s, want only its shard %s among the server files (changed: %v)", newHost, p, shard, changed)
		}
	}
	if !bytes.Contains(after[shard], []byte("server_name "+newHost+";")) {
		t.Errorf("the new route's shard %s lacks its server block", shard)
	}
	t.Logf("one more route changed %v", changed)

	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	var files []config.File
	for p, data := range after {
		files = append(files, config.File{Path: p, Data: data, Mode: 0o644})
	}
	if err := confcheck.Check(files); err != nil {
		t.Fatal(err)
	}
	if out, err := nginxtest.Test(files); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}
