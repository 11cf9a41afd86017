package config

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strconv"

	"github.com/gatewall/gatewall/internal/endpoints"
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

// UpstreamID identifies an upstream to the Lua balancer and in the
// endpoints the data plane receives: 16 hex digits of the sha256 of its
// name. Build checks that the IDs of a configuration differ.
func UpstreamID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:8])
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

// balanceCall is the balancer_by_lua_block of a dynamic upstream.
func balanceCall(id, method string) string {
	return `require("gatewall.balancer").balance("` + id + `", "` + method + `")`
}

// luaInit is the init_by_lua_block: the endpoints a previous NGINX of the
// pod left, and the Gateway's balancer settings.
func (m Main) luaInit() string {
	return `require("gatewall.endpoints").init("` + EndpointsStateFile + `") ` +
		`require("gatewall.balancer").configure(` + strconv.Itoa(int(m.Upstreams.MaxTries)) + `, ` +
		strconv.FormatInt(m.Upstreams.FailTimeout.Milliseconds(), 10) + `)`
}

// assignIDs gives each dynamic upstream its ID, in the order of names. An
// ID another upstream of the configuration took (two names whose hashes
// start alike) is derived again from the name and a count, so that the IDs
// of a configuration differ; idOf is UpstreamID.
func assignIDs(ups []*Upstream, idOf func(string) string) {
	taken := map[string]bool{}
	for _, u := range ups {
		if u.Fallback == "" {
			continue // static
		}
		id := idOf(u.Name)
		for n := 1; taken[id]; n++ {
			id = idOf(u.Name + "\x00" + strconv.Itoa(n))
		}
		taken[id] = true
		u.ID = id
	}
}

// Endpoints are the endpoints of the configuration's dynamic upstreams,
// which the data plane receives apart from the files.
func (c *Config) Endpoints() endpoints.Set {
	set := endpoints.Set{}
	for _, u := range c.Upstreams {
		if u.ID != "" {
			eps := u.Endpoints
			if eps == nil {
				eps = []string{} // a list, also when empty: the data plane reads null as no list
			}
			set[u.ID] = endpoints.Upstream{Name: u.Name, Endpoints: eps}
		}
	}
	return set
}
