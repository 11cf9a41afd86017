package snippets

import (
	"strings"
)

// place is where a directive stands: a snippet's context, or the block of
// a directive (limit_except's).
type place string

const (
	inMain        place = "main"
	inHTTP        place = "http"
	inServer      place = "http.server"
	inLocation    place = "http.server.location"
	inLimitExcept place = "limit_except"
)

// rule is what the allow-list says of one directive.
type rule struct {
	// places are where it may stand.
	places []place
	// declares: it declares something (a zone) and changes nothing until
	// a directive uses it, so that a route owner's snippet may hold it
	// outside a location.
	declares bool
	// args checks the arguments (their number and each value).
	args func(args []string) error
	// block is the place of its block; "" for a simple directive.
	block place
	// single: NGINX refuses a second one in the same block ("is
	// duplicate"), also when they come from different snippets that meet
	// there (single, keyed by key when set).
	single bool
	key    func(args []string) string
	// zones are the positions of the arguments that name zones (see
	// Render), and how to find the name in the argument.
	zones func(args []string, rename func(string) string) []string
}

// settings are where the directives that change requests may stand.
var settings = []place{inServer, inLocation}

// allowed is the allow-list. Each directive says why it is safe on a
// Gateway shared by teams; everything else is refused (refusals.go names
// why for the directives people ask for).
var allowed = map[string]rule{
	// Declares a zone counting connections per client. Its memory is
	// bounded (32k to 64m, and per Gateway: graph's budget) and its
	// name private to the object that declares it (renamed by Render),
	// so that it can neither collide with nor be used by another's. The
	// key is one of a few variables (zoneKeys): a key the client writes
	// freely would let one client fill the zone.
	"limit_conn_zone": {places: []place{inHTTP}, declares: true, args: limitConnZone, zones: renameZoneDeclaration},
	// Limits the connections of each client to the server or location:
	// only the snippet's own zones, 1 to 65535 (NGINX's bounds).
	"limit_conn": {places: settings, args: limitConn, single: true, key: firstArg, zones: renameFirst},
	// How limit_conn answers, logs and whether it only counts: values
	// NGINX takes, nothing else.
	"limit_conn_status":    {places: settings, args: statusCode, single: true},
	"limit_conn_log_level": {places: settings, args: oneOf("info", "notice", "warn", "error"), single: true},
	"limit_conn_dry_run":   {places: settings, args: oneOf("on", "off"), single: true},
	// Addresses let in or kept out (403): literal addresses and networks
	// only, checked as NGINX reads them.
	"allow": {places: []place{inServer, inLocation, inLimitExcept}, args: accessAddress},
	"deny":  {places: []place{inServer, inLocation, inLimitExcept}, args: accessAddress},
	// Methods a location lets through; the others meet its block's
	// allow and deny (NGF's snippets example). Its block holds allow and
	// deny only.
	"limit_except": {places: []place{inLocation}, args: methods, block: inLimitExcept, single: true},
	// Bandwidth of each response to a client: literal sizes.
	"limit_rate":       {places: settings, args: size(0, maxRate), single: true},
	"limit_rate_after": {places: settings, args: size(0, maxRate), single: true},
	// Compression of responses: CPU of the data plane, which the
	// workers' number bounds; literal values only.
	"gzip":              {places: settings, args: oneOf("on", "off"), single: true},
	"gzip_comp_level":   {places: settings, args: number(1, 9), single: true},
	"gzip_min_length":   {places: settings, args: size(0, maxRate), single: true},
	"gzip_types":        {places: settings, args: mimeTypes, single: true},
	"gzip_vary":         {places: settings, args: oneOf("on", "off"), single: true},
	"gzip_proxied":      {places: settings, args: gzipProxied, single: true},
	"gzip_http_version": {places: settings, args: oneOf("1.0", "1.1"), single: true},
	// Turns the access log off where it would log (it logs to the data
	// plane's standard output, Gatewall's http-level access_log): never
	// a file.
	"access_log": {places: settings, args: oneOf("off")},
}

// Allowed are the directives of the allow-list and the contexts each may
// stand in (limit_except: in a limit_except block), for the documentation
// and confcheck.
func Allowed() map[string][]string {
	out := map[string][]string{}
	for name, r := range allowed {
		for _, p := range r.places {
			out[name] = append(out[name], string(p))
		}
	}
	return out
}

// Once says whether NGINX takes a directive of the allow-list once per
// block (for confcheck: the renderer must write none of them where
// snippets go).
func Once(name string) bool { return allowed[name].single }

func firstArg(args []string) string { return args[0] }

// singleKey is what makes two directives the same for NGINX's "is
// duplicate": the name, and for limit_conn the zone.
func singleKey(name string, r rule, args []string) string {
	if r.key == nil || len(args) == 0 {
		return name
	}
	return name + " " + r.key(args)
}

// renameFirst renames the zone that is the first argument.
func renameFirst(args []string, rename func(string) string) []string {
	out := append([]string(nil), args...)
	out[0] = rename(out[0])
	return out
}

// renameZoneDeclaration renames the zone of limit_conn_zone's
// zone=name:size.
func renameZoneDeclaration(args []string, rename func(string) string) []string {
	out := append([]string(nil), args...)
	name, size, _ := strings.Cut(strings.TrimPrefix(out[1], "zone="), ":")
	out[1] = "zone=" + rename(name) + ":" + size
	return out
}
