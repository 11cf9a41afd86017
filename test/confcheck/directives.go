package confcheck

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// rule is what the renderer writes of one directive.
type rule struct {
	// ctx are the contexts it appears in.
	ctx []string
	// min and max count its arguments.
	min, max int
	// block is the context of its block: "" for none, "body" for a map or
	// split_clients body, which check reads.
	block string
	check func(c *checker, d *Directive)
}

var (
	http       = []string{ctxHTTP}
	httpLevels = []string{ctxHTTP, ctxServer, ctxLocation}
	inLocation = []string{ctxLocation}
	inServer   = []string{ctxServer}
	// httpAndUpstream: the keep-alive directives of clients and of upstreams.
	httpAndUpstream = []string{ctxHTTP, ctxServer, ctxLocation, ctxUpstream}
)

// rules are every directive Gatewall renders. Directives whose arguments
// are all fixed words have their words listed.
var rules = map[string]rule{
	"load_module":          {ctx: []string{ctxMain}, min: 1, max: 1, check: oneOfArgs(modules...)},
	"worker_processes":     {ctx: []string{ctxMain}, min: 1, max: 1, check: workerProcesses},
	"pid":                  {ctx: []string{ctxMain}, min: 1, max: 1, check: oneOfArgs(config.RunDir + "nginx.pid")},
	"error_log":            {ctx: []string{ctxMain}, min: 2, max: 2, check: errorLog},
	"events":               {ctx: []string{ctxMain}, block: ctxEvents},
	"worker_connections":   {ctx: []string{ctxEvents}, min: 1, max: 1, check: workerConnections},
	"worker_rlimit_nofile": {ctx: []string{ctxMain}, min: 1, max: 1, check: rlimitNofile},
	"http":                 {ctx: []string{ctxMain}, block: ctxHTTP},
	"stream":               {ctx: []string{ctxMain}, block: ctxStream},

	"client_body_temp_path":          {ctx: http, min: 1, max: 1, check: oneOfArgs(config.CacheDir + "client_body_temp")},
	"proxy_temp_path":                {ctx: http, min: 1, max: 1, check: oneOfArgs(config.CacheDir + "proxy_temp")},
	"fastcgi_temp_path":              {ctx: http, min: 1, max: 1, check: oneOfArgs(config.CacheDir + "fastcgi_temp")},
	"uwsgi_temp_path":                {ctx: http, min: 1, max: 1, check: oneOfArgs(config.CacheDir + "uwsgi_temp")},
	"scgi_temp_path":                 {ctx: http, min: 1, max: 1, check: oneOfArgs(config.CacheDir + "scgi_temp")},
	"proxy_http_version":             {ctx: http, min: 1, max: 1, check: oneOfArgs("1.1")},
	"server_names_hash_bucket_size":  {ctx: http, min: 1, max: 1, check: hashBucket},
	"server_names_hash_max_size":     {ctx: http, min: 1, max: 1, check: hashMax},
	"map_hash_bucket_size":           {ctx: []string{ctxHTTP, ctxStream}, min: 1, max: 1, check: hashBucket},
	"map_hash_max_size":              {ctx: []string{ctxHTTP, ctxStream}, min: 1, max: 1, check: hashMax},
	"variables_hash_bucket_size":     {ctx: []string{ctxHTTP, ctxStream}, min: 1, max: 1, check: hashBucket},
	"variables_hash_max_size":        {ctx: []string{ctxHTTP, ctxStream}, min: 1, max: 1, check: hashMax},
	"proxy_headers_hash_bucket_size": {ctx: http, min: 1, max: 1, check: hashBucket},
	"proxy_headers_hash_max_size":    {ctx: http, min: 1, max: 1, check: hashMax},
	"map":                            {ctx: []string{ctxHTTP, ctxStream}, min: 2, max: 2, block: "body", check: mapBlock},
	"split_clients":                  {ctx: []string{ctxHTTP, ctxStream}, min: 2, max: 2, block: "body", check: splitBlock},
	"geo":                            {ctx: http, min: 1, max: 1, block: "body", check: geoBlock},
	"upstream":                       {ctx: []string{ctxHTTP, ctxStream}, min: 1, max: 1, block: ctxUpstream, check: upstreamBlock},
	"keepalive":                      {ctx: []string{ctxUpstream}, min: 1, max: 1, check: number(1, math.MaxInt32)},
	"zone":                           {ctx: []string{ctxUpstream}, min: 2, max: 2, check: upstreamZone},

	// Dynamic endpoints: the Lua balancer (nginx/config/lua.go).
	"worker_shutdown_timeout":   {ctx: []string{ctxMain}, min: 1, max: 1, check: secondsOrMillis},
	"proxy_next_upstream_tries": {ctx: []string{ctxHTTP, ctxStream, ctxLocation}, min: 1, max: 1, check: number(1, 11)},
	"grpc_next_upstream_tries":  {ctx: []string{ctxHTTP, ctxLocation}, min: 1, max: 1, check: number(1, 11)},
	// A route's retry (nginx/config/actions.go retry).
	"proxy_next_upstream":   {ctx: inLocation, min: 2, max: 9, check: nextUpstream},
	"grpc_next_upstream":    {ctx: inLocation, min: 2, max: 9, check: nextUpstream},
	"lua_package_path":      {ctx: http, min: 1, max: 1, check: luaPackagePath},
	"lua_shared_dict":       {ctx: http, min: 2, max: 2, check: luaSharedDict},
	"init_by_lua_block":     {ctx: http, min: 1, max: 1, check: luaInit},
	"log_by_lua_block":      {ctx: http, min: 1, max: 1, check: luaLogPhase},
	"balancer_by_lua_block": {ctx: []string{ctxUpstream}, min: 1, max: 1, check: luaBalancer},
	"content_by_lua_block":  {ctx: inLocation, min: 1, max: 1, check: luaContent},

	"listen":               {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 5, check: listen},
	"server_name":          {ctx: inServer, min: 1, max: 1, check: serverName},
	"ssl_reject_handshake": {ctx: inServer, min: 1, max: 1, check: oneOfArgs("on")},
	"ssl_protocols":        {ctx: []string{ctxHTTP, ctxServer, ctxStream, ctxStreamServer}, min: 1, max: 4, check: sslProtocols},
	// A listener's tls.options (nginx/config/handshake.go).
	"ssl_ciphers":               {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: sslCiphers},
	"ssl_prefer_server_ciphers": {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: oneOfArgs("on", "off")},
	"ssl_ecdh_curve":            {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: sslECDHCurve},
	"ssl_session_cache":         {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: sslSessionCache},
	"ssl_session_timeout":       {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: sslSessionTimeout},
	"ssl_certificate":           {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: file},
	"ssl_certificate_key":       {ctx: []string{ctxServer, ctxStreamServer}, min: 1, max: 1, check: file},
	"ssl_client_certificate":    {ctx: inServer, min: 1, max: 1, check: file},
	"ssl_verify_depth":          {ctx: inServer, min: 1, max: 1, check: oneOfArgs("10")},
	"ssl_verify_client":         {ctx: inServer, min: 1, max: 1, check: oneOfArgs("on", "optional_no_ca")},
	"error_page":                {ctx: inServer, min: 4, max: 4, check: words("495 496 = @_gatewall_client_cert_refused")},
	"location":                  {ctx: []string{ctxServer}, min: 1, max: 2, block: ctxLocation, check: location},
	"internal":                  {ctx: inLocation, min: 0, max: 0},
	"stub_status":               {ctx: inLocation, min: 0, max: 0, check: stubStatus},
	"if":                        {ctx: []string{ctxServer, ctxLocation}, min: 1, max: 4, block: ctxIf, check: ifCondition},
	"return":                    {ctx: []string{ctxServer, ctxLocation, ctxIf, ctxStreamServer}, min: 1, max: 2, check: returnDirective},
	"rewrite":                   {ctx: inLocation, min: 2, max: 3, check: rewrite},
	"set":                       {ctx: inLocation, min: 2, max: 2, check: set},
	"mirror":                    {ctx: inLocation, min: 1, max: 1, check: mirror},
	"proxy_pass":                {ctx: []string{ctxLocation, ctxStreamServer}, min: 1, max: 1, check: pass("http://", "https://")},
	"grpc_pass":                 {ctx: inLocation, min: 1, max: 1, check: pass("grpc://", "grpcs://")},
	"proxy_set_header":          {ctx: httpLevels, min: 2, max: 2, check: setHeader},
	"grpc_set_header":           {ctx: httpLevels, min: 2, max: 2, check: setHeader},
	"add_header":                {ctx: []string{ctxLocation, ctxIf}, min: 3, max: 3, check: addHeader},
	"proxy_hide_header":         {ctx: inLocation, min: 1, max: 1, check: headerNameArg},
	"grpc_hide_header":          {ctx: inLocation, min: 1, max: 1, check: headerNameArg},

	"proxy_read_timeout":            {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"proxy_send_timeout":            {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"proxy_connect_timeout":         {ctx: []string{ctxHTTP, ctxLocation, ctxStream}, min: 1, max: 1, check: secondsOrMillis},
	"proxy_next_upstream_timeout":   {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"grpc_read_timeout":             {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"grpc_send_timeout":             {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"grpc_connect_timeout":          {ctx: []string{ctxHTTP, ctxLocation}, min: 1, max: 1, check: secondsOrMillis},
	"grpc_next_upstream_timeout":    {ctx: inLocation, min: 1, max: 1, check: milliseconds},
	"proxy_ssl_server_name":         {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("on")},
	"grpc_ssl_server_name":          {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("on")},
	"proxy_ssl_name":                {ctx: inLocation, min: 1, max: 1, check: sslName},
	"grpc_ssl_name":                 {ctx: inLocation, min: 1, max: 1, check: sslName},
	"proxy_ssl_verify":              {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("on")},
	"grpc_ssl_verify":               {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("on")},
	"proxy_ssl_verify_depth":        {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("10")},
	"grpc_ssl_verify_depth":         {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("10")},
	"proxy_ssl_trusted_certificate": {ctx: inLocation, min: 1, max: 1, check: file},
	"grpc_ssl_trusted_certificate":  {ctx: inLocation, min: 1, max: 1, check: file},
	"proxy_ssl_certificate":         {ctx: inLocation, min: 1, max: 1, check: file},
	"grpc_ssl_certificate":          {ctx: inLocation, min: 1, max: 1, check: file},
	"proxy_ssl_certificate_key":     {ctx: inLocation, min: 1, max: 1, check: file},
	"grpc_ssl_certificate_key":      {ctx: inLocation, min: 1, max: 1, check: file},

	// Authentication: AuthenticationFilter's Basic, ExternalAuth's
	// subrequests and the body they may send (confcheck/auth.go).
	"auth_basic":                 {ctx: inLocation, min: 1, max: 1, check: authBasic},
	"auth_basic_user_file":       {ctx: inLocation, min: 1, max: 1, check: usersFile},
	"auth_request":               {ctx: inLocation, min: 1, max: 1, check: authRequest},
	"auth_request_set":           {ctx: inLocation, min: 2, max: 2, check: authRequestSet},
	"proxy_method":               {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("$request_method")},
	"proxy_pass_request_headers": {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("off")},
	"proxy_pass_request_body":    {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("off")},
	"proxy_set_body":             {ctx: inLocation, min: 1, max: 1, check: authBody},
	"rewrite_by_lua_block":       {ctx: inLocation, min: 1, max: 1, check: luaForwardBody},
	// JWT (confcheck/jwt.go).
	"access_by_lua_block": {ctx: inLocation, min: 1, max: 1, check: luaJWTVerify},

	// ProxySettingsPolicy.
	"proxy_buffering":         {ctx: httpLevels, min: 1, max: 1, check: oneOfArgs("on", "off")},
	"proxy_buffer_size":       {ctx: httpLevels, min: 1, max: 1, check: size},
	"proxy_buffers":           {ctx: httpLevels, min: 2, max: 2, check: buffers},
	"proxy_busy_buffers_size": {ctx: httpLevels, min: 1, max: 1, check: size},
	"grpc_buffer_size":        {ctx: httpLevels, min: 1, max: 1, check: size},

	"client_max_body_size":    {ctx: httpLevels, min: 1, max: 1, check: size},
	"client_body_buffer_size": {ctx: httpLevels, min: 1, max: 1, check: size},
	"client_body_timeout":     {ctx: httpLevels, min: 1, max: 1, check: policyTime},
	"keepalive_requests":      {ctx: httpAndUpstream, min: 1, max: 1, check: number(0, math.MaxInt32)},
	"keepalive_time":          {ctx: httpAndUpstream, min: 1, max: 1, check: policyTime},
	"keepalive_timeout":       {ctx: httpAndUpstream, min: 1, max: 2, check: keepaliveTimeout},

	"limit_req_zone":      {ctx: http, min: 3, max: 3, check: limitReqZone},
	"limit_req":           {ctx: inLocation, min: 1, max: 3, check: limitReq},
	"limit_req_dry_run":   {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("on", "off")},
	"limit_req_log_level": {ctx: inLocation, min: 1, max: 1, check: oneOfArgs("info", "notice", "warn", "error")},
	"limit_req_status":    {ctx: inLocation, min: 1, max: 1, check: number(400, 599)},

	// WAFGatewayBindingPolicy.
	"app_protect_enforcer_address":    {ctx: http, min: 1, max: 1, check: oneOfArgs("127.0.0.1:50000")},
	"app_protect_enable":              {ctx: httpLevels, min: 1, max: 1, check: oneOfArgs("on")},
	"app_protect_policy_file":         {ctx: httpLevels, min: 1, max: 1, check: file},
	"app_protect_security_log_enable": {ctx: httpLevels, min: 1, max: 1, check: oneOfArgs("on", "off")},
	"app_protect_security_log":        {ctx: httpLevels, min: 2, max: 2, check: securityLog},

	// The stream sniffer of cleartext ports serving HTTP/1.x and h2c.
	"js_import":      {ctx: []string{ctxStream}, min: 3, max: 3, check: jsImport},
	"js_var":         {ctx: []string{ctxStream}, min: 2, max: 2, check: jsVar},
	"js_preread":     {ctx: []string{ctxStreamServer}, min: 1, max: 1, check: oneOfArgs("gw.preread")},
	"proxy_protocol": {ctx: []string{ctxStream, ctxStreamServer}, min: 1, max: 1, check: proxyProtocol},

	// TLS passthrough (TLSRoutes).
	"ssl_preread": {ctx: []string{ctxStreamServer}, min: 1, max: 1, check: oneOfArgs("on")},
	// TCP and UDP listeners' idle connections and sessions end, and each
	// listener's are bounded (nginx/config/l4.go).
	"proxy_timeout":        {ctx: []string{ctxStreamServer}, min: 1, max: 1, check: secondsOrMillis},
	"limit_conn_zone":      {ctx: []string{ctxStream}, min: 2, max: 2, check: words("$protocol$server_port zone=gatewall_l4_connections:2m")},
	"limit_conn_log_level": {ctx: []string{ctxStream}, min: 1, max: 1, check: oneOfArgs("warn")},
	"limit_conn":           {ctx: []string{ctxStreamServer}, min: 2, max: 2, check: limitConn},
}

// limitConn: a TCP or UDP listener's bound, in the one zone, whose
// connections the main context's budget must hold.
func limitConn(c *checker, d *Directive) {
	if d.Args[0].Value != "gatewall_l4_connections" {
		c.fail(d, "limit_conn zone %q: not the listeners' zone", d.Args[0].Value)
	}
	n, err := strconv.Atoi(d.Args[1].Value)
	if err != nil || n < 1 || n > 32767 {
		c.fail(d, "limit_conn %q: not a number from 1 to 32767", d.Args[1].Value)
	}
	c.l4Connections += graph.ConnectionsPerL4Client * n
}

// sslProtocols: protocols of validation.TLSProtocols, each once, in order.
func sslProtocols(c *checker, d *Directive) {
	next := 0
	for _, a := range d.Args {
		i := slices.Index(validation.TLSProtocols, a.Value)
		if i < next {
			c.fail(d, "ssl_protocols %q: not a protocol of %v, in order, once", a.Value, validation.TLSProtocols)
			return
		}
		next = i + 1
	}
}

func sslCiphers(c *checker, d *Directive) {
	if _, err := validation.CipherString(d.Args[0].Value); err != nil {
		c.fail(d, "ssl_ciphers: %v", err)
	}
}

func sslECDHCurve(c *checker, d *Directive) {
	if _, auto, err := validation.ParseTLSGroups(d.Args[0].Value); err != nil || auto {
		c.fail(d, "ssl_ecdh_curve: %v (auto is NGINX's default, never written)", err)
	}
}

func sslSessionTimeout(c *checker, d *Directive) {
	if _, err := validation.ParseSSLSessionTimeout(d.Args[0].Value); err != nil {
		c.fail(d, "ssl_session_timeout: %v", err)
	}
}

// sslSessionCacheRE is a shared session cache: a zone of Gatewall's
// naming, and its size.
var sslSessionCacheRE = regexp.MustCompile(`^shared:(sslsess_[a-z0-9_.-]+):([0-9]+[kKmM]?)$`)

// sslSessionCache: off, or a shared cache whose zone has one size
// wherever it is named; together the zones fit the Gateway's budget.
func sslSessionCache(c *checker, d *Directive) {
	v := d.Args[0].Value
	if v == "off" {
		return
	}
	m := sslSessionCacheRE.FindStringSubmatch(v)
	if m == nil {
		c.fail(d, "ssl_session_cache %q", v)
		return
	}
	_, n, err := validation.ParseSSLSessionCache(m[2])
	if err != nil {
		c.fail(d, "ssl_session_cache %q: %v", v, err)
		return
	}
	if have, ok := c.sessionZones[m[1]]; ok && have != n {
		c.fail(d, "session cache zone %s has sizes %d and %d", m[1], have, n)
	}
	c.sessionZones[m[1]] = n
	var total int64
	for _, size := range c.sessionZones {
		total += size
	}
	if total > validation.SSLSessionCacheBudget {
		c.fail(d, "the session caches hold %d bytes, more than the Gateway's budget", total)
	}
}

// proxyProtocol is on for the whole stream context (its servers pass
// connections to http servers and passthrough servers that read it), and
// off in a passthrough server (its backends speak TLS).
func proxyProtocol(c *checker, d *Directive) {
	want := "on"
	if c.ctx == ctxStreamServer {
		want = "off"
	}
	if d.Args[0].Value != want {
		c.fail(d, "proxy_protocol %q in %s", d.Args[0].Value, c.ctx)
	}
}

// modules are the modules nginx.conf may load.
var modules = []string{"modules/ngx_stream_module.so", "modules/ngx_stream_js_module.so", "modules/ngx_http_app_protect_module.so",
	"modules/ndk_http_module.so", "modules/ngx_http_lua_module.so"}

// systemFiles are the data plane's own files directives may refer to.
var systemFiles = map[string]bool{"/etc/ssl/certs/ca-certificates.crt": true}

func oneOfArgs(allowed ...string) func(*checker, *Directive) {
	return func(c *checker, d *Directive) {
		for _, a := range d.Args {
			if !contains(allowed, a.Value) {
				c.fail(d, "%s %q: not one of %q", d.Name, a.Value, allowed)
			}
		}
	}
}

// words wants exactly these arguments.
func words(want string) func(*checker, *Directive) {
	return func(c *checker, d *Directive) {
		if got := strings.Join(d.values(), " "); got != want {
			c.fail(d, "%s %s: want %s", d.Name, got, want)
		}
	}
}

func number(min, max int) func(*checker, *Directive) {
	return func(c *checker, d *Directive) {
		n, err := strconv.Atoi(d.Args[0].Value)
		if err != nil || n < min || n > max {
			c.fail(d, "%s %q: not a number from %d to %d", d.Name, d.Args[0].Value, min, max)
		}
	}
}

// hashBucket is a hash table's bucket size: from NGINX's smallest default
// up to the largest it accepts (65,536 minus a cache line).
var hashBucket = number(64, 65536-64)

// hashMax is a hash table's maximum size: Gatewall asks for at most 10,000.
var hashMax = number(512, 10000)

// workerProcesses is auto, or a count from a CPU limit (at most 1024).
func workerProcesses(c *checker, d *Directive) {
	if d.Args[0].Value != "auto" {
		number(1, 1024)(c, d)
	}
}

func errorLog(c *checker, d *Directive) {
	oneOfArgs("stderr", "/var/log/nginx/error.log")(c, &Directive{Name: d.Name, Args: d.Args[:1], File: d.File, Line: d.Line})
	oneOfArgs("debug", "info", "notice", "warn", "error", "crit", "alert", "emerg")(c, &Directive{Name: d.Name, Args: d.Args[1:], File: d.File, Line: d.Line})
}

func file(c *checker, d *Directive) { c.refer(d, d.Args[0].Value) }

// server is a server block of http or stream, or a server of an upstream.
func (c *checker) serverDirective(d *Directive, ctx string) {
	switch {
	case ctx == ctxUpstream && d.Block == nil && len(d.Args) >= 1 && len(d.Args) <= 2:
		upstreamServer(c, d)
	case ctx == ctxHTTP && d.Block != nil && len(d.Args) == 0:
		c.server = &server{locations: map[string]bool{}}
		c.walk(d.Block, ctxServer)
		c.server = nil
	case ctx == ctxStream && d.Block != nil && len(d.Args) == 0:
		c.walk(d.Block, ctxStreamServer)
	default:
		c.fail(d, "server directive in %s context", ctx)
	}
}

var listenParams = []string{"default_server", "ssl", "http2", "proxy_protocol", "udp"}

func listen(c *checker, d *Directive) {
	addr := d.Args[0].Value
	socket := addr
	if slices.ContainsFunc(d.Args[1:], func(a Arg) bool { return a.Value == "udp" }) {
		socket += " udp" // a UDP port is a socket beside the TCP one
	}
	c.listening[socket] = true
	if c.server != nil {
		c.server.listens = append(c.server.listens, addr)
	}
	port := strings.TrimPrefix(addr, "[::]:")
	switch {
	case strings.HasPrefix(addr, "unix:"+config.RunDir) && strings.HasSuffix(addr, ".sock"):
	default:
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			c.fail(d, "listen %q: not a port from 1 to 65535", addr)
		}
	}
	for _, a := range d.Args[1:] {
		if !contains(listenParams, a.Value) {
			c.fail(d, "listen parameter %q", a.Value)
		}
	}
}

func serverName(c *checker, d *Directive) {
	if h := d.Args[0].Value; h != "" {
		if err := validation.Hostname(h); err != nil {
			c.fail(d, "server_name: %v", err)
		}
	}
}

// stubStatus: NGINX's counts are served to nginx-agent in the pod only, on
// the status socket, never on a port clients reach.
func stubStatus(c *checker, d *Directive) {
	if c.server == nil || !slices.Equal(c.server.listens, []string{config.StatusSocket}) {
		c.fail(d, "stub_status in a server that does not listen on %s alone", config.StatusSocket)
	}
}

func headerNameArg(c *checker, d *Directive) {
	if err := validation.HeaderName(d.Args[0].Value); err != nil {
		c.fail(d, "%s: %v", d.Name, err)
	}
}

func setHeader(c *checker, d *Directive) {
	headerNameArg(c, d)
	headerValueExpr(c, d, d.Args[1])
}

func addHeader(c *checker, d *Directive) {
	headerNameArg(c, d)
	headerValueExpr(c, d, d.Args[1])
	oneOfArgs("always")(c, &Directive{Name: d.Name, Args: d.Args[2:], File: d.File, Line: d.Line})
}

var millisecondsRE = regexp.MustCompile(`^[0-9]{1,12}ms$`)

// secondsOrMillisRE is a time the renderer writes in seconds or
// milliseconds (nginx/config's nginxTime).
var secondsOrMillisRE = regexp.MustCompile(`^[0-9]{1,12}(ms|s)$`)

func secondsOrMillis(c *checker, d *Directive) {
	if !secondsOrMillisRE.MatchString(d.Args[0].Value) {
		c.fail(d, "%s %q: not a time in seconds or milliseconds", d.Name, d.Args[0].Value)
	}
}

func milliseconds(c *checker, d *Directive) {
	if !millisecondsRE.MatchString(d.Args[0].Value) {
		c.fail(d, "%s %q: not a time in milliseconds", d.Name, d.Args[0].Value)
	}
}

// policyTimeRE is a policy's Duration as NGINX reads it (no suffix:
// seconds); policySecondsRE the same in whole seconds.
var (
	policyTimeRE    = regexp.MustCompile(validation.DurationPattern)
	policySecondsRE = regexp.MustCompile(`^[0-9]{1,4}(s|m|h)?$`)
)

func policyTime(c *checker, d *Directive) {
	if !policyTimeRE.MatchString(d.Args[0].Value) {
		c.fail(d, "%s %q: not a policy duration", d.Name, d.Args[0].Value)
	}
}

// keepaliveTimeout: a duration, then the Keep-Alive header's in seconds
// (not in an upstream).
func keepaliveTimeout(c *checker, d *Directive) {
	policyTime(c, d)
	if len(d.Args) == 2 && c.ctx == ctxUpstream {
		c.fail(d, "%s in an upstream takes one value", d.Name)
	}
	if len(d.Args) == 2 && !policySecondsRE.MatchString(d.Args[1].Value) {
		c.fail(d, "%s header timeout %q: not whole seconds", d.Name, d.Args[1].Value)
	}
}

var (
	rateZoneRE = regexp.MustCompile(`^zone=(rl_[a-z0-9.-]+_[a-z0-9.-]+_[0-9]+):([0-9]+[km]?)$`)
	limitReqRE = regexp.MustCompile(`^(zone=rl_[a-z0-9.-]+_[a-z0-9.-]+_[0-9]+|burst=[1-9][0-9]*|delay=[1-9][0-9]*|nodelay)$`)
	keyVarRE   = regexp.MustCompile(`\$[A-Za-z0-9_]*`)
)

// limitReqZone: a key whose variables are on the allow-list, a rate limit
// zone of Gatewall's naming of at least 32k, and a rate NGINX accepts.
func limitReqZone(c *checker, d *Directive) {
	key := d.Args[0].Value
	if strings.ContainsAny(key, "\"'") {
		c.fail(d, "limit_req_zone key %q quotes or escapes", key)
	}
	for _, v := range keyVarRE.FindAllString(key, -1) {
		if !validation.RateLimitKeyVariable(v[1:]) {
			c.fail(d, "limit_req_zone key variable %s is not allowed", v)
		}
	}
	m := rateZoneRE.FindStringSubmatch(d.Args[1].Value)
	if m == nil {
		c.fail(d, "limit_req_zone zone %q", d.Args[1].Value)
	} else if n, err := validation.ParseSize(m[2]); err != nil || n < 32*1024 {
		c.fail(d, "limit_req_zone size %q: NGINX wants at least 32k", m[2])
	}
	rate, ok := strings.CutPrefix(d.Args[2].Value, "rate=")
	if _, _, err := validation.ParseRate(rate); !ok || err != nil {
		c.fail(d, "limit_req_zone %q: %v", d.Args[2].Value, err)
	}
}

// limitReq: a zone, then burst and delay (never 0, which NGINX refuses) or nodelay.
func limitReq(c *checker, d *Directive) {
	if !strings.HasPrefix(d.Args[0].Value, "zone=") {
		c.fail(d, "limit_req without a zone first")
	}
	for _, a := range d.Args {
		if !limitReqRE.MatchString(a.Value) {
			c.fail(d, "limit_req argument %q", a.Value)
		}
	}
}

func sslName(c *checker, d *Directive) {
	if err := validation.ExactHostname(d.Args[0].Value); err != nil {
		c.fail(d, "%s: %v", d.Name, err)
	}
}

func size(c *checker, d *Directive) {
	for _, a := range d.Args {
		if _, err := validation.ParseSize(a.Value); err != nil {
			c.fail(d, "%s %q: %v", d.Name, a.Value, err)
		}
	}
}

func buffers(c *checker, d *Directive) {
	if n, err := strconv.Atoi(d.Args[0].Value); err != nil || n < validation.MinBuffersNumber || n > validation.MaxBuffersNumber {
		c.fail(d, "proxy_buffers number %q", d.Args[0].Value)
	}
	size(c, &Directive{Name: d.Name, Args: d.Args[1:], File: d.File, Line: d.Line})
}

func jsImport(c *checker, d *Directive) {
	if d.Args[0].Value != "gw" || d.Args[1].Value != "from" {
		c.fail(d, "js_import %q", strings.Join(d.values(), " "))
	}
	c.refer(d, d.Args[2].Value)
}

// set keeps the request's path before a dispatch rewrites it, or gives the
// Lua balancer a retrying route's tries.
func set(c *checker, d *Directive) {
	switch d.Args[0].Value {
	case "$gw_retry_tries":
		number(2, 11)(c, &Directive{Name: d.Name, Args: d.Args[1:], Line: d.Line})
	case authBodyVar:
		// Emptied before the body is read into it (rewrite_by_lua_block).
		oneOfArgs("")(c, &Directive{Name: d.Name, Args: d.Args[1:], Line: d.Line})
	case jwtClaimVar(d.Args[0].Value):
		// Emptied before the JWT's Lua sets a claim into it.
		oneOfArgs("")(c, &Directive{Name: d.Name, Args: d.Args[1:], Line: d.Line})
	default:
		words("$gw_orig_uri $uri")(c, d)
	}
	c.define(d, d.Args[0].Value)
}

// nextUpstream is a retry's conditions: error and timeout, then the
// statuses NGINX can retry on, each once.
func nextUpstream(c *checker, d *Directive) {
	vals := d.values()
	if vals[0] != "error" || vals[1] != "timeout" {
		c.fail(d, "%s %v: want error timeout first", d.Name, vals)
	}
	seen := map[string]bool{}
	for _, v := range vals[2:] {
		code, err := strconv.Atoi(strings.TrimPrefix(v, "http_"))
		if seen[v] || !strings.HasPrefix(v, "http_") || err != nil || !slices.Contains(graph.RetryCodes, code) {
			c.fail(d, "%s %q: not a status NGINX retries on, or twice", d.Name, v)
		}
		seen[v] = true
	}
}

func jsVar(c *checker, d *Directive) {
	c.define(d, d.Args[0].Value)
	oneOfArgs("h1")(c, &Directive{Name: d.Name, Args: d.Args[1:], File: d.File, Line: d.Line})
}

// upstreamZone: a zone of at least 32k (no g suffix, which zone refuses)
// and at most 1g, named after its upstream.
func upstreamZone(c *checker, d *Directive) {
	size := d.Args[1].Value
	if n, err := validation.ParseSize(size); err != nil || n < 32*1024 || n > 1<<30 || strings.ContainsAny(size, "gG") {
		c.fail(d, "zone size %q: NGINX wants 32k to 1024m, without g", size)
	}
	if d.Args[0].Value != c.upstream {
		c.fail(d, "zone %q in upstream %q: zones are named after their upstream", d.Args[0].Value, c.upstream)
	}
}

// workerConnections and rlimitNofile read the main context's budgets,
// which budgets checks once everything is read.
func workerConnections(c *checker, d *Directive) {
	number(1, 65535)(c, d)
	c.workerConnections, _ = strconv.Atoi(d.Args[0].Value)
}

func rlimitNofile(c *checker, d *Directive) {
	number(1, 1<<20)(c, d)
	c.rlimitNofile, _ = strconv.Atoi(d.Args[0].Value)
}

// budgets checks that the listening sockets and the TCP and UDP
// listeners' connections leave each worker graph.ClientConnections
// connections for clients (with one more NGINX starts, and serves
// nothing), and that a worker may open a file for each connection and one
// more for its temporary file.
func (c *checker) budgets() {
	if c.workerConnections < len(c.listening)+c.l4Connections+graph.ClientConnections {
		c.fail(nil, "worker_connections %d: %d listening sockets and %d connections of TCP and UDP listeners leave fewer than %d connections for clients",
			c.workerConnections, len(c.listening), c.l4Connections, graph.ClientConnections)
	}
	if c.rlimitNofile < 2*c.workerConnections {
		c.fail(nil, "worker_rlimit_nofile %d is under twice worker_connections %d", c.rlimitNofile, c.workerConnections)
	}
}
