package snippets

import "strings"

// refusals say why directives people ask for are not on the allow-list,
// and what Gatewall offers instead: a refusal says more than "not
// allowed". The reasons are the allow-list's rules: nothing reads or
// writes outside the data plane's own state, runs code, sends requests
// where the snippet says, or changes what Gatewall's configuration relies
// on; Gatewall's APIs for a setting are validated and budgeted where a
// snippet's copy would collide with them.
var refusals = map[string]string{
	"include":                     "it reads a file of the data plane",
	"load_module":                 "it loads code into NGINX",
	"root":                        "it serves the data plane's own files",
	"alias":                       "it serves the data plane's own files",
	"try_files":                   "it serves the data plane's own files",
	"autoindex":                   "it lists the data plane's own files",
	"env":                         "it hands the data plane's environment (its credentials) to NGINX",
	"user":                        "it changes the user NGINX runs as",
	"pid":                         "Gatewall sets it, and it writes a file",
	"error_log":                   "it writes a file, or floods the data plane's log",
	"log_format":                  "it would reach Gatewall's http context",
	"resolver":                    "it sends DNS queries to an address the snippet chooses",
	"set":                         "it can overwrite variables Gatewall's configuration relies on",
	"map":                         "it defines variables, which can collide with Gatewall's own",
	"if":                          "its conditions evaluate variables and regular expressions, and directives inside it behave otherwise than outside",
	"return":                      "use an HTTPRoute's RequestRedirect filter, or a rule without backends",
	"rewrite":                     "use an HTTPRoute's URLRewrite filter",
	"error_page":                  "it can send requests to Gatewall's internal locations",
	"mirror":                      "it sends copies of requests where the snippet says: use an HTTPRoute's RequestMirror filter",
	"auth_basic":                  "use an AuthenticationFilter",
	"auth_basic_user_file":        "it reads a file of the data plane: use an AuthenticationFilter",
	"auth_request":                "it sends requests where the snippet says: use an ExternalAuth filter",
	"satisfy":                     "it can let requests past authentication",
	"add_header":                  "use an HTTPRoute's ResponseHeaderModifier filter",
	"proxy_set_header":            "one in a location drops every header Gatewall sets for the backends: use a RequestHeaderModifier filter",
	"proxy_hide_header":           "use an HTTPRoute's ResponseHeaderModifier filter",
	"client_max_body_size":        "use a ClientSettingsPolicy",
	"client_body_timeout":         "use a ClientSettingsPolicy",
	"client_body_buffer_size":     "use a ClientSettingsPolicy",
	"keepalive_timeout":           "use a ClientSettingsPolicy",
	"keepalive_requests":          "use a ClientSettingsPolicy",
	"keepalive_time":              "use a ClientSettingsPolicy",
	"limit_req":                   "use a RateLimitPolicy",
	"limit_req_zone":              "use a RateLimitPolicy",
	"limit_req_status":            "use a RateLimitPolicy",
	"real_ip_header":              "it lets clients choose the address every address check sees",
	"set_real_ip_from":            "it lets clients choose the address every address check sees",
	"underscores_in_headers":      "it changes how the requests of every route on the port are read",
	"ignore_invalid_headers":      "it changes how the requests of every route on the port are read",
	"large_client_header_buffers": "it changes how the requests of every route on the port are read, and their memory",
	"server_tokens":               "Gatewall sets it",
	"stub_status":                 "it shows the data plane's counters to clients",
	"server":                      "it adds a server that listens where the snippet says",
	"location":                    "routes make locations",
	"listen":                      "listeners make the ports",
	"server_name":                 "routes and listeners make the server names",
	"worker_processes":            "Gatewall sets it (NginxProxy)",
	"worker_connections":          "Gatewall sets it (NginxProxy workerConnections)",
	"worker_rlimit_nofile":        "Gatewall sets it",
	"worker_shutdown_timeout":     "Gatewall sets it (NginxProxy workerShutdownTimeout)",
	"daemon":                      "it changes how the data plane runs NGINX",
	"master_process":              "it changes how the data plane runs NGINX",
	"working_directory":           "it changes how the data plane runs NGINX",
	"thread_pool":                 "it changes how the data plane runs NGINX",
	"events":                      "Gatewall writes the events block",
	"http":                        "Gatewall writes the http block",
	"stream":                      "Gatewall writes the stream block",
	"upstream":                    "Services make upstreams",
}

// refusalPrefixes say why families of directives are refused.
var refusalPrefixes = []struct{ prefix, why string }{
	{"lua_", "Lua runs Gatewall's own code only"},
	{"js_", "njs runs Gatewall's own code only"},
	{"perl", "it runs code in NGINX"},
	{"ssl_", "TLS is the listeners' (and BackendTLSPolicy's), and its directives read files"},
	{"proxy_ssl_", "TLS to backends is BackendTLSPolicy's, and its directives read files"},
	{"grpc_ssl_", "TLS to backends is BackendTLSPolicy's, and its directives read files"},
	{"proxy_", "proxying is the routes': their backendRefs say where requests go, and Gatewall's configuration relies on its own proxy settings (use a ProxySettingsPolicy for buffering)"},
	{"grpc_", "proxying is the routes': their backendRefs say where requests go"},
	{"fastcgi_", "it sends requests where the snippet says"},
	{"uwsgi_", "it sends requests where the snippet says"},
	{"scgi_", "it sends requests where the snippet says"},
	{"memcached_", "it sends requests where the snippet says"},
	{"split_clients", "it defines variables, which can collide with Gatewall's own"},
	{"geo", "it defines variables, which can collide with Gatewall's own"},
	{"secure_link", "it defines variables, which can collide with Gatewall's own"},
	{"auth_jwt", "use an AuthenticationFilter"},
	{"app_protect_", "use a WAFGatewayBindingPolicy"},
	{"open_file_cache", "it keeps the data plane's files open"},
	{"client_body_temp", "it writes files"},
	{"sub_filter", "it rewrites responses with text and variables of the snippet's"},
	{"ssi", "it runs server-side includes, which read files and make requests"},
	{"dav_", "it writes files"},
}

// whyRefused says why a directive off the allow-list is refused.
func whyRefused(name string) string {
	if why, ok := refusals[name]; ok {
		return why
	}
	for _, p := range refusalPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.why
		}
	}
	if strings.Contains(name, "_by_lua") {
		return "Lua runs Gatewall's own code only"
	}
	if strings.HasSuffix(name, "_temp_path") || strings.HasSuffix(name, "_cache_path") {
		return "it writes files"
	}
	return ""
}
