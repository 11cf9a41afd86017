package agent

import (
	"fmt"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"k8s.io/apimachinery/pkg/types"
)

// pod is what the server knows of one data-plane pod. All fields are guarded
// by Server.mu.
type pod struct {
	name types.NamespacedName
	key  Key

	// What the agent reported in CreateConnection/UpdateDataPlaneStatus.
	resourceID string
	agentPID   int32
	nginxID    string // instance ID of the NGINX instance; "" until NGINX is found
	configPath string
	// agentSession changes when the agent process changes: its in-flight push
	// is lost then. nginxSession changes when NGINX restarts: what it runs is
	// unknown then.
	agentSession string
	nginxSession string

	stream *stream // the open Subscribe stream, nil when disconnected

	// A fresh agent reports its files (UpdateOverview) right after connecting;
	// a push racing that report races inside the agent, so the first push of
	// an agent session waits for the report or for overviewGrace.
	overviewSeen bool
	graceUntil   time.Time
	graceTimer   *time.Timer

	applied string // version NGINX runs after the last OK apply
	// settled is the version whose final result arrived in this agent session:
	// it is not pushed again until the agent or NGINX changes.
	settled       string
	failedVersion string // version of the last FAILURE, cleared when pushed again
	failMessage   string
	failure       Failure
	// A failure that is not NGINX's verdict (e.g. the agent could not fetch a
	// file while the control plane was away) is retried with backoff.
	retries    int
	retryAt    time.Time
	retryTimer *time.Timer

	inflight *push
	// stale are pushes given up on (unanswered within PushTimeout, or whose
	// Send failed) whose files the agent may still be fetching.
	stale []*push

	ttlTimer *time.Timer // forgets the pod when it stays disconnected
}

// push is a ConfigApplyRequest sent and not answered yet.
type push struct {
	version       *version
	correlationID string
	timer         *time.Timer // retries the push when the agent never answers
}

// identify records what the agent reported about itself and its instances.
// It returns whether the agent or NGINX is not the one seen before.
func (p *pod) identify(res *mpi.Resource, now time.Time, grace time.Duration) (newAgent, newNginx bool) {
	var agentPID int32
	var nginx *mpi.Instance
	for _, in := range res.GetInstances() {
		switch in.GetInstanceMeta().GetInstanceType() {
		case mpi.InstanceMeta_INSTANCE_TYPE_AGENT:
			agentPID = in.GetInstanceRuntime().GetProcessId()
		case mpi.InstanceMeta_INSTANCE_TYPE_NGINX, mpi.InstanceMeta_INSTANCE_TYPE_NGINX_PLUS:
			// One NGINX per data-plane container; should there be more, the
			// lowest instance ID is chosen so that the choice is stable.
			if nginx == nil || in.GetInstanceMeta().GetInstanceId() < nginx.GetInstanceMeta().GetInstanceId() {
				nginx = in
			}
		}
	}
	p.resourceID = res.GetResourceId()
	p.agentPID = agentPID
	agentSession := fmt.Sprintf("%s/%d", p.resourceID, agentPID)
	nginxSession := ""
	if nginx != nil {
		p.nginxID = nginx.GetInstanceMeta().GetInstanceId()
		p.configPath = nginx.GetInstanceRuntime().GetConfigPath()
		nginxSession = fmt.Sprintf("%s/%s/%d", p.resourceID, p.nginxID, nginx.GetInstanceRuntime().GetProcessId())
	} else {
		p.nginxID, p.configPath = "", ""
	}
	if agentSession != p.agentSession {
		newAgent = true
		p.agentSession = agentSession
		p.overviewSeen = false
		p.graceUntil = now.Add(grace)
		p.settled = ""
	}
	if nginxSession != p.nginxSession {
		newNginx = true
		p.nginxSession = nginxSession
		p.applied = ""
		p.settled = ""
	}
	return newAgent, newNginx
}

// clearFailure forgets the last failure.
func (p *pod) clearFailure() {
	p.failedVersion, p.failMessage, p.failure = "", "", ""
}

// state is the pod's ApplyState for the desired version.
func (p *pod) state(desired string) ApplyState {
	switch {
	case desired == "":
		return Pending
	case p.inflight == nil && p.applied == desired:
		return Applied
	case p.inflight == nil && p.failedVersion == desired:
		return Failed
	}
	return Pending
}

// status is the pod's PodStatus for the desired version.
func (p *pod) status(desired string) PodStatus {
	st := PodStatus{
		Pod:            p.name,
		Connected:      p.stream != nil,
		AppliedVersion: p.applied,
		State:          p.state(desired),
	}
	if st.State == Failed {
		st.Message, st.Failure = p.failMessage, p.failure
	}
	return st
}

// kick wakes the pod's stream so that it sends what is due.
func (p *pod) kick() {
	if p.stream != nil {
		select {
		case p.stream.kick <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// stopTimers stops every timer of the pod.
func (p *pod) stopTimers() {
	for _, t := range []*time.Timer{p.graceTimer, p.ttlTimer, p.retryTimer} {
		if t != nil {
			t.Stop()
		}
	}
	if p.inflight != nil && p.inflight.timer != nil {
		p.inflight.timer.Stop()
	}
}
