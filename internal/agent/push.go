package agent

import (
	"cmp"
	"regexp"
	"strings"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/id"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/types"
)

// defaultConfigPath is the main NGINX file when the agent did not report one.
const defaultConfigPath = "/etc/nginx/nginx.conf"

// Backoff of pushes retried after a failure that is not NGINX's verdict.
const (
	retryBase = 5 * time.Second
	retryMax  = 5 * time.Minute
)

// takePush returns the ConfigApplyRequest due on st, if any, and records it
// as the pod's in-flight push.
func (s *Server) takePush(st *stream) (*mpi.ManagementPlaneRequest, *push) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := st.pod
	v := s.desired[p.key]
	switch {
	case p.stream != st, p.inflight != nil, p.nginxID == "", v == nil, v.id == p.settled:
		return nil, nil
	case !p.overviewSeen && s.now().Before(p.graceUntil):
		return nil, nil // the grace timer kicks again
	case v.id == p.failedVersion && s.now().Before(p.retryAt):
		return nil, nil // a retry of a failed transfer: its timer kicks again
	}
	before := p.status(v.id)
	corr := id.GenerateMessageID()
	psh := &push{version: s.ref(p.key, v), correlationID: corr}
	psh.timer = time.AfterFunc(s.pushTimeout, func() { s.expirePush(p, corr) })
	p.inflight = psh
	p.failedVersion, p.failMessage = "", ""
	s.changed(p, before)
	req := &mpi.ManagementPlaneRequest{
		MessageMeta: &mpi.MessageMeta{MessageId: id.GenerateMessageID(), CorrelationId: corr, Timestamp: timestamppb.Now()},
		Request: &mpi.ManagementPlaneRequest_ConfigApplyRequest{ConfigApplyRequest: &mpi.ConfigApplyRequest{
			Overview: v.overview(p.nginxID, cmp.Or(p.configPath, defaultConfigPath)),
		}},
	}
	return req, psh
}

// unsent takes back a push whose sending failed: the agent may not have it.
func (s *Server) unsent(p *pod, psh *push) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.inflight == psh {
		before := p.status(s.desiredID(p.key))
		s.dropInflight(p)
		s.changed(p, before)
	}
}

// expirePush gives up waiting for the answer to a push, so that it is sent
// again: the agent lost it, or is stuck.
func (s *Server) expirePush(p *pod, corr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods[p.name] != p || p.inflight == nil || p.inflight.correlationID != corr {
		return
	}
	s.log.Info("No answer to a push; sending it again", "pod", p.name, "gateway", p.key,
		"version", p.inflight.version.id, "timeout", s.pushTimeout)
	s.dropInflight(p)
	p.kick()
}

// dropInflight forgets p's in-flight push and releases its files. s.mu held.
func (s *Server) dropInflight(p *pod) {
	if p.inflight == nil {
		return
	}
	p.inflight.timer.Stop()
	s.unref(p.key, p.inflight.version)
	p.inflight = nil
}

// finish records an agent's answer to a push; it returns the event to report
// when the answer is final.
func (s *Server) finish(name types.NamespacedName, r *mpi.DataPlaneResponse) *Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[name]
	if p == nil || p.inflight == nil || p.inflight.correlationID != r.GetMessageMeta().GetCorrelationId() {
		s.log.V(1).Info("Ignoring an answer to no in-flight push", "pod", name,
			"correlationID", r.GetMessageMeta().GetCorrelationId(), "status", r.GetCommandResponse().GetStatus())
		return nil
	}
	cr := r.GetCommandResponse()
	v := p.inflight.version.id
	before := p.status(s.desiredID(p.key))
	ev := &Event{Type: EventApplyResult, Key: p.key, Pod: name, Version: v}
	switch cr.GetStatus() {
	case mpi.CommandResponse_COMMAND_STATUS_OK:
		p.applied, p.settled = v, v
		p.failedVersion, p.failMessage = "", ""
		p.retries, p.retryAt = 0, time.Time{}
		ev.Message = "OK"
		s.log.Info("Configuration applied", "pod", name, "gateway", p.key, "version", v, "agent", cr.GetMessage())
	case mpi.CommandResponse_COMMAND_STATUS_FAILURE:
		p.failedVersion, p.failMessage = v, nginxMessage(cr)
		ev.Message = p.failMessage
		if isNGINXVerdict(p.failMessage) {
			p.settled = v // pushing it again would fail again
		} else {
			delay := min(retryBase<<min(p.retries, 10), retryMax)
			p.retries++
			p.retryAt = s.now().Add(delay)
			s.after(&p.retryTimer, delay, p)
		}
		s.log.Info("Configuration rejected", "pod", name, "gateway", p.key, "version", v,
			"message", p.failMessage, "retryAt", p.retryAt)
	default:
		// ERROR is followed by FAILURE once the agent has rolled back;
		// IN_PROGRESS is not final either.
		s.log.V(1).Info("Push in progress", "pod", name, "status", cr.GetStatus(), "message", cr.GetMessage(),
			"error", cr.GetError())
		return nil
	}
	s.dropInflight(p)
	s.changed(p, before)
	p.kick()
	return ev
}

// nginxMessage is NGINX's own error text from a failure: its [emerg], [alert]
// and [crit] lines (from `nginx -t` or the error log), without what the agent
// wrote around them; else the agent's error.
func nginxMessage(cr *mpi.CommandResponse) string {
	text := cmp.Or(cr.GetError(), cr.GetMessage())
	verdict := regexp.MustCompile(`(nginx: |\d{4}/\d\d/\d\d \d\d:\d\d:\d\d )?\[(emerg|alert|crit)\].*`)
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if m := verdict.FindString(l); m != "" {
			lines = append(lines, strings.TrimSpace(m))
		}
	}
	if len(lines) == 0 {
		return strings.TrimSpace(text)
	}
	return strings.Join(lines, "\n")
}

// isNGINXVerdict reports whether text holds NGINX's own error lines, i.e. the
// failure is the configuration's fault rather than the transfer's.
func isNGINXVerdict(text string) bool {
	return strings.Contains(text, "[emerg]") || strings.Contains(text, "[alert]") || strings.Contains(text, "[crit]")
}
