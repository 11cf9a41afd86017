package dataplane

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/status"
)

// The agent server authenticates agents with TokenReviews of their bound
// tokens and checks their pods.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get

// AgentDataPlane is the DataPlane of real data planes: it pushes each
// Gateway's files through the nginx-agent server and reports what the pods'
// agents answered.
type AgentDataPlane struct {
	server *agent.Server
	// feed streams the endpoints; nil: none are sent.
	feed *endpointfeed.Server
	// started is when this manager started; until a pod reports or
	// reconnectGrace passes, a Gateway without pods is Unknown, not Pending.
	started time.Time
}

// reconnectGrace is how long after a manager start a Gateway whose pods have
// not reconnected yet keeps its previous Programmed status.
const reconnectGrace = time.Minute

// NewAgentDataPlane adapts an agent server and the endpoint feed registered
// on it (nil: endpoints are not sent).
func NewAgentDataPlane(s *agent.Server, feed *endpointfeed.Server) *AgentDataPlane {
	return &AgentDataPlane{server: s, feed: feed, started: time.Now()}
}

// PublishEndpoints hands the endpoints and key sources to the feed, which
// sends each connected pod of the Gateway what changed (nothing when
// unchanged), in one update when both changed.
func (d *AgentDataPlane) PublishEndpoints(gw types.NamespacedName, set endpoints.Set, r endpoints.Resolver, keys endpoints.KeySources) {
	if d.feed != nil {
		d.feed.SetKeySources(gw, keys)
		d.feed.Set(gw, set, r)
	}
}

// Publish hands the files to the agent server, which pushes them to every
// connected pod of the Gateway (nothing when unchanged).
func (d *AgentDataPlane) Publish(gw types.NamespacedName, files []config.File) string {
	return d.server.SetConfig(gw, files) // datafile.Version(files)
}

// Forget drops the Gateway's configuration.
func (d *AgentDataPlane) Forget(gw types.NamespacedName) {
	d.server.DeleteConfig(gw)
	if d.feed != nil {
		d.feed.Forget(gw)
	}
}

// State is Applied when every connected pod of the Gateway runs the version,
// Failed when a pod rejected it (with NGINX's message), else Pending.
func (d *AgentDataPlane) State(gw types.NamespacedName, version string) status.DataPlane {
	// The server's desired version is the one id (datafile.Version) of
	// what was published last.
	st := d.server.Status(gw)
	if st.Version != version {
		return status.DataPlane{State: status.Pending, Message: "the configuration has not been pushed yet"}
	}
	restarting := time.Since(d.started) < reconnectGrace
	var connected, applied, unknown int
	var failed []string
	for _, p := range st.Pods {
		if !p.Connected {
			continue
		}
		connected++
		switch {
		case p.State == agent.Applied:
			applied++
		case p.State == agent.Failed:
			failed = append(failed, failureMessage(p))
		case restarting && p.AppliedVersion == "":
			// Reconnected after this manager started and not yet answered:
			// what it runs is not known yet.
			unknown++
		}
	}
	sort.Strings(failed)
	switch {
	case len(failed) > 0:
		return status.DataPlane{State: status.Failed, Message: strings.Join(failed, "; ")}
	case unknown > 0:
		return status.DataPlane{State: status.Unknown, Message: "waiting for the data plane pods that reconnected after Gatewall started to confirm their configuration"}
	case connected == 0 && time.Since(d.started) < reconnectGrace:
		return status.DataPlane{State: status.Unknown, Message: "waiting for the data plane pods to connect (Gatewall started less than a minute ago)"}
	case connected == 0:
		return status.DataPlane{State: status.Pending, Message: "no data plane pod of the Gateway is connected to Gatewall"}
	case applied == connected:
		return d.endpointsState(gw, st.Pods)
	}
	return status.DataPlane{State: status.Pending, Message: fmt.Sprintf("%d of %d data plane pods applied the configuration", applied, connected)}
}

// failureMessage says why a pod did not apply the configuration and what its
// NGINX runs instead, for the Programmed condition.
func failureMessage(p agent.PodStatus) string {
	switch p.Failure {
	case agent.FailureRollbackFailed:
		return fmt.Sprintf("pod %s: %s (the agent could not restore the previous configuration either: what NGINX runs is not known)", p.Pod.Name, p.Message)
	case agent.FailureRetrying:
		return fmt.Sprintf("pod %s could not apply it and will try again; NGINX keeps its last good configuration: %s", p.Pod.Name, p.Message)
	}
	return fmt.Sprintf("pod %s rejected it and keeps its last good configuration: %s", p.Pod.Name, p.Message)
}

// endpointsState is the state of a Gateway whose pods applied its
// configuration, with what is not so of their endpoints: a pod whose
// endpoints client is not connected serves the endpoints it had (Applied,
// said in the message); a pod that refused its endpoints, or some
// upstreams' (naming them), is not programmed with them (Pending).
func (d *AgentDataPlane) endpointsState(gw types.NamespacedName, pods []agent.PodStatus) status.DataPlane {
	if d.feed == nil {
		return status.DataPlane{State: status.Applied}
	}
	byPod := map[types.NamespacedName]endpointfeed.PodStatus{}
	for _, p := range d.feed.Status(gw).Pods {
		byPod[p.Pod] = p
	}
	var refused, unfed, unresolved []string
	for _, p := range pods {
		if !p.Connected {
			continue
		}
		ep, ok := byPod[p.Pod]
		switch {
		case !ok:
			unfed = append(unfed, p.Pod.Name)
		case ep.Error != "", len(ep.Refused) > 0:
			refused = append(refused, ep.String())
		}
		if ok && len(ep.Unresolved) > 0 {
			unresolved = append(unresolved, ep.UnresolvedString())
		}
		if ok && len(ep.KeySets) > 0 {
			unresolved = append(unresolved, ep.KeySetsString())
		}
	}
	sort.Strings(refused)
	sort.Strings(unfed)
	sort.Strings(unresolved)
	// A DNS name that does not resolve is its Service's (or its DNS
	// server's) doing, not the data plane's: the Gateway stays
	// programmed, and says which upstreams answer without those names;
	// so is a JWT key set that cannot be fetched its filter's (or its
	// server's).
	var msgs []string
	if len(unfed) > 0 {
		msgs = append(msgs, fmt.Sprintf("the endpoints client of pod %s is not connected to Gatewall: it serves the endpoints it had", strings.Join(unfed, ", ")))
	}
	msgs = append(msgs, unresolved...)
	switch {
	case len(refused) > 0:
		return status.DataPlane{State: status.Pending, Message: strings.Join(append(refused, msgs...), "; ")}
	case len(msgs) > 0:
		return status.DataPlane{State: status.Applied, Message: strings.Join(msgs, "; ")}
	}
	return status.DataPlane{State: status.Applied}
}
