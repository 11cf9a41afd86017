package config

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
)

// Dynamic endpoints. An http upstream lists no endpoints: its
// balancer_by_lua_block asks Gatewall's Lua balancer (lua/gatewall/*.lua,
// pushed with the configuration) for one, and the balancer reads them from
// a shared dict that the data plane's endpoints client fills, apart from
// the configuration and without a reload (package endpoints). Only
// Gatewall's own code runs there: the configuration's Lua blocks hold
// constant text, an upstream's ID (hex digits) and a method from a fixed
// list; a hash method's key, which users write, reaches Lua as the value of
// an NGINX variable ($gw_hash_<ID>), never as code.

//go:embed lua
var luaFS embed.FS

// Paths and names of the dynamic endpoints on the data plane.
const (
	// LuaDir is where the Lua modules are written; lua_package_path.
	LuaDir = "/etc/nginx/lua/"
	// EndpointsSocket is where NGINX takes endpoint updates from the
	// endpoints client, in the pod only (no port).
	EndpointsSocket = "unix:" + endpoints.Socket
	// EndpointsStateFile is where the endpoints client keeps the last
	// endpoints it received, which a starting NGINX loads.
	EndpointsStateFile = endpoints.StateFile
	// EndpointsPath is the control location on EndpointsSocket.
	EndpointsPath = endpoints.ControlPath
	// endpointsDict and balancerDict are the shared dicts of the
	// endpoints and of the balancer's state (failed endpoints, requests in
	// flight), in every worker; their sizes are fixed, so that a reload
	// keeps their content.
	endpointsDict     = "gatewall_endpoints"
	endpointsDictSize = "32m"
	balancerDict      = "gatewall_balancer"
	balancerDictSize  = "16m"
)

// luaModules are the dynamic modules the Lua balancer needs (Debian's
// libnginx-mod-http-ndk and libnginx-mod-http-lua).
var luaModules = []string{"modules/ndk_http_module.so", "modules/ngx_http_lua_module.so"}

// luaFiles are the Lua modules as data-plane files.
func luaFiles() []File {
	var files []File
	err := fs.WalkDir(luaFS, "lua", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := luaFS.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, File{Path: LuaDir + path.Clean(p[len("lua/"):]), Data: data, Mode: 0o644})
		return nil
	})
	if err != nil {
		panic("embedded Lua modules: " + err.Error()) // the embed is part of the binary
	}
	return files
}

// An upstream's ID names it to the Lua balancer and in the endpoints the
// data plane receives, whose shared dict outlives configurations: a reload
// keeps it, and the manager sends a new configuration's endpoints before
// its files, while the old configuration still serves. So an ID must mean
// one upstream in every configuration: it is derived from the upstream's
// identity (the Service port and protocol, as names.go encodes them), not
// from its name, whose digest fallback depends on the configuration's other
// names; and it has 128 bits (32 hex digits of SHA-256), so that no one can
// find two identities sharing one.
//
// endpoints.IDLength is the length the client and the Lua check.

// upstreamID is the ID of the upstream of an identity.
func upstreamID(identity string) string { return digest(identity)[:endpoints.IDLength] }

// UpstreamID is the ID of the upstream of a Service port's HTTP backends
// (HTTP/1.1, WebSocket), in every configuration.
func UpstreamID(svc types.NamespacedName, port int32) string {
	return upstreamID(identity(kindUpstream, []string{svc.Namespace, svc.Name, strconv.Itoa(int(port))}))
}

// H2CUpstreamID is the ID of the upstream of a Service port spoken to with
// HTTP/2 without TLS (gRPC), in every configuration.
func H2CUpstreamID(svc types.NamespacedName, port int32) string {
	return upstreamID(identity(kindUpstream, []string{svc.Namespace, svc.Name, strconv.Itoa(int(port)), "h2c"}))
}

// luaMethods are the balancer's methods (balancer.lua's pickers) for the
// load-balancing directives an UpstreamSettingsPolicy gives.
func luaMethod(words []string) string {
	switch {
	case len(words) == 0:
		return "round_robin"
	case words[0] == "hash" && len(words) == 3:
		return "hash_consistent"
	case words[0] == "random" && len(words) > 1:
		return "random_two"
	}
	switch words[0] {
	case "least_conn", "ip_hash", "hash", "random":
		return words[0]
	}
	return "round_robin"
}

// hashKeyVariable is the variable holding a hash method's key for the upstream.
func hashKeyVariable(id string) string { return "$gw_hash_" + id }

// hashKeyMaps are the maps of the hash methods' keys, one per dynamic
// upstream balanced by a hash: the key reaches the balancer as a
// variable's value, never as code. They are maps of the configuration
// (Config.Maps), so that its variables hash is sized with their names.
func hashKeyMaps(ups []*Upstream) []*Map {
	var out []*Map
	for _, u := range ups {
		if u.ID == "" || u.Settings == nil {
			continue
		}
		if m := luaMethod(u.Settings.Method); m == "hash" || m == "hash_consistent" {
			out = append(out, &Map{Source: `""`, Variable: hashKeyVariable(u.ID), Default: u.Settings.Method[1]})
		}
	}
	return out
}

// balanceCall is the balancer_by_lua_block of a dynamic upstream.
func balanceCall(id, method string) string {
	return `require("gatewall.balancer").balance("` + id + `", "` + method + `")`
}

// luaInit is the init_by_lua_block: the bounds of updates, the endpoints a
// previous NGINX of the pod left, the Gateway's balancer settings, and the
// JWT filters' policies and remote key sets (jwt.go).
func (m Main) luaInit() string {
	return `require("gatewall.endpoints").init("` + EndpointsStateFile + `", ` + strconv.Itoa(endpoints.MaxEndpointsPerUpstream) + `) ` +
		`require("gatewall.balancer").configure(` + strconv.Itoa(int(m.Upstreams.MaxTries)) + `, ` +
		strconv.FormatInt(m.Upstreams.FailTimeout.Milliseconds(), 10) + `) ` + luaInitJWT()
}

// assignIDs gives each dynamic upstream its ID (idOf of its identity) and
// checks that the IDs of the configuration differ. Two identities sharing
// an ID (a SHA-256 collision on 128 bits: never seen) leave the
// configuration without IDs, and the message says why: no other ID could
// be given without making it depend on the configuration's other
// upstreams, which is what an ID must not.
func assignIDs(ups []*Upstream, idOf func(identity string) string) string {
	byID := map[string]*Upstream{}
	for _, u := range ups {
		if u.Fallback == "" {
			continue // static
		}
		id := idOf(u.identity)
		if other := byID[id]; other != nil {
			for _, u := range ups {
				u.ID = ""
			}
			return fmt.Sprintf("the upstreams %s and %s have the same ID %s", other.Name, u.Name, id)
		}
		byID[id] = u
		u.ID = id
	}
	return ""
}

// Endpoints are the endpoints of the configuration's dynamic upstreams,
// which the data plane receives apart from the files (but for those the
// Gateway's endpoint budget had no room for, which answer 503).
func (c *Config) Endpoints() endpoints.Set {
	return endpointSet(c.Upstreams, func(u *Upstream) ([]string, []string) { return u.Endpoints, u.Names })
}

// EndpointsOf are the endpoints of the dynamic upstreams ups (a
// configuration's Upstreams) when their backends have the endpoints
// fresh gives (graph.Gateway.RefreshEndpoints): what Endpoints would be
// of a configuration built from them, which would be the same but for them.
// With changed Services, the upstreams of the others are last's (the set
// of the same upstreams with endpoints the same as fresh's for them).
func EndpointsOf(ups []*Upstream, fresh map[graph.UpstreamKey]graph.UpstreamEndpoints, last endpoints.Set, changed map[types.NamespacedName]bool) endpoints.Set {
	of := func(u *Upstream) ([]string, []string) {
		f := fresh[u.Key]
		return u.dynamicEndpoints(f.Endpoints, f.Names)
	}
	if changed == nil || last == nil {
		return endpointSet(ups, of)
	}
	set := maps.Clone(last)
	for _, u := range ups {
		if changed[u.Key.Service] {
			addUpstream(set, u, of)
		}
	}
	return set
}

// endpointSet is the set of the dynamic upstreams that are sent, each with
// the endpoints and names of gives.
func endpointSet(ups []*Upstream, of func(*Upstream) ([]string, []string)) endpoints.Set {
	set := make(endpoints.Set, len(ups))
	for _, u := range ups {
		addUpstream(set, u, of)
	}
	return set
}

// addUpstream puts a dynamic upstream that is sent into set, with the
// endpoints and names of gives.
func addUpstream(set endpoints.Set, u *Upstream, of func(*Upstream) ([]string, []string)) {
	if u.ID == "" || u.Unsent {
		return
	}
	eps, names := of(u)
	if eps == nil {
		eps = []string{} // a list, also when empty: the data plane reads null as no list
	}
	set[u.ID] = endpoints.Upstream{Name: u.Name, Endpoints: eps, Names: names}
}
