// Package apis is the one home of Gatewall's optional APIs: which exist
// (Optional: PLM's, the optional route kinds' of routekind.Kinds,
// ListenerSet, BackendTLSPolicy), what each one's absence leaves out
// (Missing), how the manager finds that the cluster serves one and which
// optional fields of the Gateway API's CRDs it serves (Setup: at start and
// then periodically, on every replica), and the Registry the reconcilers
// ask (Served, Supports) and register with (When) so that an API whose
// CRD is installed after the manager started is used without a restart.
package apis
