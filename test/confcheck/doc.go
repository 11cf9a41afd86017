// Package confcheck reads the NGINX configuration Gatewall renders the way
// NGINX's configuration parser does, and checks it against what the
// renderer promises, without running NGINX: so fuzz tests can check every
// input in microseconds, where `nginx -t` takes tens of milliseconds.
//
// Check reads nginx.conf and every file it includes, in the context NGINX
// reads them in, and verifies that
//
//   - every file parses (quotes, escapes and braces as NGINX reads them)
//     and is reached from nginx.conf or referred to by a directive;
//   - every directive is one the renderer writes, in a context where it
//     writes it, with the number of arguments it writes;
//   - every snippet file (SnippetsFilter's, SnippetsPolicy's) holds only
//     what package snippets allows in the context it is included in, the
//     same allow-list users' snippets are held to, and its zones are
//     named by the renderer, declared once and declared where used;
//   - every user value (hostnames, paths, header names and values, regular
//     expressions, query parameters, sizes, log destinations, endpoint
//     addresses) passes package validation's check for its kind;
//   - every variable used is defined (by a map, split_clients, set, js_var,
//     a named capture) or is one of NGINX's, and every file, upstream and
//     internal location referred to exists.
//
// It is a test oracle: it knows the renderer's output shapes, so a change
// to them may need a change here.
package confcheck
