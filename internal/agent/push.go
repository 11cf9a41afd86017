package agent

import (
	"cmp"
	"regexp"
	"slices"
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
	p.clearFailure()
	s.changed(p, before)
	req := &mpi.ManagementPlaneRequest{
		MessageMeta: &mpi.MessageMeta{MessageId: id.GenerateMessageID(), CorrelationId: corr, Timestamp: timestamppb.Now()},
		Request: &mpi.ManagementPlaneRequest_ConfigApplyRequest{ConfigApplyRequest: &mpi.ConfigApplyRequest{
			Overview: v.overview(p.nginxID, cmp.Or(p.configPath, defaultConfigPath)),
		}},
	}
	return req, psh
}

// unsent takes back a push whose sending failed: the agent may not have it,
// or may have it and be fetching its files, which therefore stay.
func (s *Server) unsent(p *pod, psh *push) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.inflight == psh {
		before := p.status(s.desiredID(p.key))
		s.abandonInflight(p)
		s.changed(p, before)
	}
}

// expirePush gives up waiting for the answer to a push, so that it is sent
// again: the agent lost it, or is stuck.
func (s *Server) expirePush(p *pod, corr string) {
	s.mu.Lock()
	if s.pods[p.name] != p || p.inflight == nil || p.inflight.correlationID != corr {
		s.mu.Unlock()
		return
	}
	ev := Event{Type: EventPushTimedOut, Key: p.key, Pod: p.name, Version: p.inflight.version.id}
	s.log.Info("No answer to a push; sending it again", "pod", p.name, "gateway", p.key,
		"version", ev.Version, "timeout", s.pushTimeout)
	s.abandonInflight(p)
	p.kick()
	s.mu.Unlock()
	s.observe(ev)
}

// dropPushes forgets p's in-flight push and the abandoned ones, and
// releases their files: the agent answered a newer push, or the agent
// process (or the pod's Gateway) is not the one they were sent to. s.mu held.
func (s *Server) dropPushes(p *pod) {
	if p.inflight != nil {
		p.inflight.timer.Stop()
		s.unref(p.key, p.inflight.version)
		p.inflight = nil
	}
	for _, psh := range p.stale {
		s.unref(p.key, psh.version)
	}
	p.stale = nil
}

// maxStale bounds the abandoned pushes kept per pod: an agent that never
// answers would otherwise pin one version per PushTimeout while the
// configuration keeps changing.
const maxStale = 4

// abandonInflight stops waiting for p's in-flight push, so that the next
// one can be sent, but keeps its files: the agent may have received it and
// still be fetching them. They are released when a later push is answered,
// when this one's own answer arrives, or when the agent process goes.
// s.mu held.
func (s *Server) abandonInflight(p *pod) {
	if p.inflight == nil {
		return
	}
	p.inflight.timer.Stop()
	p.stale = append(p.stale, p.inflight)
	p.inflight = nil
	if len(p.stale) > maxStale {
		s.unref(p.key, p.stale[0].version)
		p.stale = p.stale[1:]
	}
}

// finishStale releases an abandoned push whose final answer arrived late;
// it reports whether corr was one. s.mu held.
func (s *Server) finishStale(p *pod, corr string) bool {
	for i, psh := range p.stale {
		if psh.correlationID == corr {
			s.unref(p.key, psh.version)
			p.stale = slices.Delete(p.stale, i, i+1)
			return true
		}
	}
	return false
}

// finish records an agent's answer to a push; it returns the event to report
// when the answer is final.
func (s *Server) finish(name types.NamespacedName, r *mpi.DataPlaneResponse) *Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[name]
	cr := r.GetCommandResponse()
	corr := r.GetMessageMeta().GetCorrelationId()
	if p == nil || p.inflight == nil || p.inflight.correlationID != corr {
		if p != nil && isFinal(cr.GetStatus()) && s.finishStale(p, corr) {
			s.log.V(1).Info("Late answer to an abandoned push; its files are released", "pod", name,
				"correlationID", corr, "status", cr.GetStatus())
			return nil
		}
		s.log.V(1).Info("Ignoring an answer to no in-flight push", "pod", name,
			"correlationID", corr, "status", cr.GetStatus())
		return nil
	}
	v := p.inflight.version.id
	before := p.status(s.desiredID(p.key))
	ev := &Event{Type: EventApplyResult, Key: p.key, Pod: name, Version: v}
	switch cr.GetStatus() {
	case mpi.CommandResponse_COMMAND_STATUS_OK:
		p.applied, p.settled = v, v
		p.clearFailure()
		p.retries, p.retryAt = 0, time.Time{}
		ev.Message = "OK"
		s.log.Info("Configuration applied", "pod", name, "gateway", p.key, "version", v, "agent", cr.GetMessage())
	case mpi.CommandResponse_COMMAND_STATUS_FAILURE:
		p.failedVersion, p.failMessage = v, nginxMessage(cr)
		ev.Message = p.failMessage
		verdict := isNGINXVerdict(p.failMessage)
		switch {
		case rollbackFailed(cr) && !rollbackEchoed(cr):
			// NGINX may run neither this version nor the last good one.
			p.failure, p.applied = FailureRollbackFailed, ""
		case verdict:
			p.failure = FailureRejected
		default:
			p.failure = FailureRetrying
		}
		if verdict {
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
	// The agent answered: it is done with this push and the abandoned ones.
	s.dropPushes(p)
	s.changed(p, before)
	p.kick()
	return ev
}

// isFinal says whether an agent's answer ends its handling of a push.
func isFinal(st mpi.CommandResponse_CommandStatus) bool {
	return st == mpi.CommandResponse_COMMAND_STATUS_OK || st == mpi.CommandResponse_COMMAND_STATUS_FAILURE
}

// nginxMessage is NGINX's own error text from a failure: its [emerg], [alert]
// and [crit] lines (from `nginx -t` or the error log), each once, without
// what the agent wrote around them; else the agent's error.
func nginxMessage(cr *mpi.CommandResponse) string {
	text := cmp.Or(cr.GetError(), cr.GetMessage())
	if lines := verdictLines(text); len(lines) > 0 {
		return strings.Join(lines, "\n")
	}
	return strings.TrimSpace(text)
}

var (
	verdictLine = regexp.MustCompile(`(nginx: |\d{4}/\d\d/\d\d \d\d:\d\d:\d\d )?\[(emerg|alert|crit)\].*`)
	// logTime starts a line of NGINX's error log (`nginx -t` prints "nginx: ").
	logTime = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)
)

// verdictLines are NGINX's [emerg], [alert] and [crit] lines in text, in
// order; a line repeated with another time (NGINX retries bind() every
// 0.5 s) is kept once.
func verdictLines(text string) []string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		m := strings.TrimSpace(verdictLine.FindString(l))
		key := logTime.ReplaceAllString(m, "")
		if m == "" || seen[key] {
			continue
		}
		seen[key] = true
		lines = append(lines, m)
	}
	return lines
}

// rollbackFailed says whether the agent reported that restoring the
// previous configuration failed too ("Config apply failed, rollback failed").
func rollbackFailed(cr *mpi.CommandResponse) bool {
	return strings.Contains(strings.ToLower(cr.GetMessage()), "rollback failed")
}

// rollbackEchoed says whether the agent's failed rollback saw nothing but
// the error-log lines its failed apply had reported already. NGINX logs
// some reload errors again while it retries: a port it cannot bind, five
// times in 2 s. The agent watches the error log for each reload from the end
// of the file, and starts its rollback as soon as it saw the first line (and
// found NGINX's workers renewed: any worker still shutting down from an
// earlier reload makes that check pass at once); its rollback's watch then
// reads the failed reload's retries as its own. NGINX, meanwhile, never ran
// the failed version (a failed reload keeps the running configuration), and
// reloads the restored files once it gives up (the rollback's SIGHUP waits).
// The restored files cannot fail the same way: they are the last good
// version, whose ports NGINX already holds. The agent's text is
// "config apply error: <apply>\nrollback error: <rollback>".
func rollbackEchoed(cr *mpi.CommandResponse) bool {
	apply, rollback, ok := strings.Cut(cr.GetError(), "\nrollback error: ")
	if !ok {
		return false
	}
	applied := map[string]bool{}
	for _, l := range verdictLines(apply) {
		applied[logTime.ReplaceAllString(l, "")] = logTime.MatchString(l)
	}
	echoes := verdictLines(rollback)
	for _, l := range echoes {
		if !logTime.MatchString(l) || !applied[logTime.ReplaceAllString(l, "")] {
			return false
		}
	}
	return len(echoes) > 0
}

// isNGINXVerdict reports whether text holds NGINX's own error lines, i.e. the
// failure is the configuration's fault rather than the transfer's.
func isNGINXVerdict(text string) bool {
	return strings.Contains(text, "[emerg]") || strings.Contains(text, "[alert]") || strings.Contains(text, "[crit]")
}
