// Package snippets decides what of the NGINX configuration users write by
// hand (the snippets of SnippetsFilters and SnippetsPolicies) may reach a
// shared Gateway's NGINX, and in what form.
//
// A snippet is read as NGINX reads configuration (syntax.Read) and each
// of its directives is held to an allow-list for its context, arguments
// included (allow.go): only directives whose effect stays within the data
// plane's own state and within what the snippet's owner may change. No
// directive reads or writes a file, loads or runs code, sends requests to
// an address the snippet chooses, or changes what Gatewall's own
// configuration relies on (its variables, headers, servers); no argument
// holds a variable outside the few listed. A SnippetsFilter (Rule scope)
// belongs to a route's owner, so its snippets may only change the rules
// that name it: outside the location context they may only declare. A
// snippet that fails any of this refuses its whole object, with the
// snippet, the line and the reason.
//
// What is allowed is written back with syntax.Format's words (Render), not
// as the user wrote it: what NGINX reads is what was checked. Shared
// memory zones are private to the object that declares them: the renderer
// gives each a generated name (config.SnippetZone) and Render puts it
// wherever the snippet names the zone.
//
// The package is pure: the same snippets give the same result.
package snippets
