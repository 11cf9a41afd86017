// Package agent is Gatewall's side of the nginx-agent v3 protocol (mpi.v1): the
// gRPC CommandService and FileService that the agents of the data planes
// connect to, and the nginx-agent.conf those agents run with.
//
// What the package promises:
//
//   - A configuration is a set of files (datafile.File) for one Gateway (Key). SetConfig
//     stores it under a version that is a hash of its content; storing the same
//     content again changes nothing and pushes nothing.
//   - Every connected pod serving the Gateway gets the newest configuration: a
//     ConfigApplyRequest carrying the full overview of the version is sent on the
//     agent's Subscribe stream, and the agent fetches the files it lacks with
//     GetFile/GetFileStream. At most one push is in flight per pod; a newer
//     configuration set meanwhile is pushed when the in-flight one completes,
//     and the files of every version an in-flight push references are kept until
//     it completes, so an agent never asks for a file that is gone.
//   - A pod that connects, or reconnects after losing its agent or NGINX, gets
//     the current configuration again.
//   - The outcome of each push is tracked per pod (Status): the version NGINX runs
//     after the last successful apply and, for the desired version, Pending,
//     Applied or Failed with NGINX's own error text. OnChange reports changes.
//   - Agents are authenticated on every RPC: TLS 1.3 only, then a bearer token
//     checked by an Authenticator (a TokenReview of a bound ServiceAccount token
//     in production) that yields the pod, the Gateway it serves and the pod's
//     addresses. In production the pod must also be that Gateway's data plane
//     as the manager rendered it (RequirePod: its seal, package podseal), and
//     unless Options.AnyPeerAddress the RPC must come from one of the pod's
//     addresses, whether its token is reviewed then or its verdict reused. An
//     agent whose configured labels name another Gateway is refused, and an
//     agent can only fetch files of its own Gateway.
//   - Any pod can reach the agent port, so an unauthenticated peer holds
//     little: no request is read before its token is authenticated; what
//     needs no review to refuse (no token, a malformed or screened-out one,
//     one refused a few seconds ago) is refused before the stream exists;
//     reviews are bounded at once and per peer address; connections are
//     bounded in all and per peer address, and closed when they do not
//     complete their handshakes; connections none of whose RPCs has
//     authenticated are bounded apart, make room for new ones and are closed
//     after a deadline, so they never hold the places authenticated agents
//     and new ones need (conns.go); an authenticated pod has a bounded
//     number of RPCs in flight; refusals are logged sampled, those of pods
//     that are not their Gateway's data plane apart, and reported with a
//     reason (Event.Reason) for metrics (gate.go, limits.go). Every service
//     registered on the server, through its authenticatingRegistrar, gets
//     the same protections.
package agent
