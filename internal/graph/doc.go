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
//  2. listeners: protocol, port, hostname, TLS certificates, allowed kinds,
//     then conflicts between listeners;
//  3. routes that name the Gateway in a parentRef: attachment to listeners
//     (sectionName, port, allowed namespaces and kinds, hostname intersection);
//  4. each route's rules: matches, filters (the objects ExtensionRef filters
//     name resolved through ExtensionFilterKinds, ExternalAuth's service),
//     backendRefs (Services resolved through EndpointSlices, ReferenceGrants
//     for other namespaces); a filter that cannot process a rule's requests
//     makes the rule answer 500, never serve without it;
//  5. the Gateway's budgets, spent oldest route first: listening sockets
//     (sockets.go), then the endpoints its data plane holds
//     (endpointbudget.go), then the remote JWT key sets it fetches
//     (jwt.go);
//  6. attached-route counts and the Gateway's own conditions.
package graph
