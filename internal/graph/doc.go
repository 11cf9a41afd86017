// Package graph turns a snapshot of cluster objects into the validated graph
// of one Gateway: its class, listeners, the routes attached to them with their
// rules and resolved backends, and every condition Gatewall will report on
// them. Invalid parts are kept out of the graph's usable set with a condition
// saying why, so one user's mistake never affects another's traffic.
//
// The package is pure: no I/O, no clients, no clocks. The same input gives
// the same graph. Processing order, per Gateway:
//
//  1. the GatewayClass (ours? parameters valid?) and the effective NginxProxy;
//  2. listeners: protocol, port, hostname, TLS certificates and options,
//     allowed kinds, then conflicts between listeners, the budgets of
//     sockets and TLS session caches, and, once the ListenerSets' listeners
//     joined, what each HTTPS port's TLS handshake allows (handshake.go);
//  3. the SnippetsPolicies that target the Gateway, oldest first
//     (snippets.go: the one policy kind the graph reads, since its snippets
//     meet the rules' SnippetsFilters in the same locations);
//  4. routes that name the Gateway in a parentRef: attachment to listeners
//     (sectionName, port, allowed namespaces and kinds, hostname intersection);
//  5. each route's rules: matches, filters (the objects ExtensionRef filters
//     name resolved through ExtensionFilterKinds, ExternalAuth's service),
//     backendRefs (Services resolved through EndpointSlices, ReferenceGrants
//     for other namespaces); then whether each rule's SnippetsFilters can
//     join the Gateway's policies in its locations; a filter that cannot
//     process a rule's requests makes the rule answer 500, never serve
//     without it;
//  6. the Gateway's budgets, spent oldest route first: listening sockets
//     (sockets.go), then the endpoints its data plane holds
//     (endpointbudget.go), then the remote JWT key sets it fetches
//     (jwt.go);
//  7. attached-route counts and the Gateway's own conditions.
package graph
