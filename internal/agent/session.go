package agent

import (
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// connect records an authenticated agent's CreateConnection or
// UpdateDataPlaneStatus: which agent process and NGINX instance the pod has.
func (s *Server) connect(id Identity, res *mpi.Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[id.Pod]
	if p == nil {
		p = &pod{name: id.Pod, key: id.Gateway}
		s.pods[id.Pod] = p
		s.armTTL(p)
		s.notifier.Add(p.key)
	}
	before := p.status(s.desiredID(p.key))
	if p.key != id.Gateway {
		// The pod serves another Gateway now: nothing known about it holds.
		s.log.Info("Pod moved to another Gateway", "pod", p.name, "from", p.key, "to", id.Gateway)
		s.dropPushes(p)
		s.notifier.Add(p.key)
		p.key = id.Gateway
		p.agentSession, p.nginxSession = "", ""
		p.clearFailure()
	}
	newAgent, newNginx := p.identify(res, s.now(), s.overviewGrace)
	if newAgent {
		// The agent process is new: a push sent to the old one is lost, and
		// so are the files it might still have fetched.
		s.dropPushes(p)
		p.retries, p.retryAt = 0, time.Time{}
		s.after(&p.graceTimer, s.overviewGrace, p)
		if p.stream != nil {
			// The old process's stream may not have ended yet (its TCP
			// connection not seen closed): nothing more may be sent on it, or
			// the next push would go to a dead agent while the new one's
			// Subscribe finds a push in flight and is sent nothing.
			close(p.stream.replaced)
			p.stream = nil
			s.armTTL(p)
		}
	}
	if newAgent || newNginx {
		s.log.Info("Agent identified", "pod", p.name, "gateway", p.key, "resource", p.resourceID,
			"agentPID", p.agentPID, "nginxInstance", p.nginxID, "newAgent", newAgent, "newNGINX", newNginx)
	}
	s.changed(p, before)
	p.kick()
}

// overviewReported records that the pod's agent reported its files. When
// they are exactly the desired version's — an agent reconnecting after a
// manager restart — NGINX already runs that version: the pod counts as
// applied and nothing is pushed (no needless reload, no status flap).
func (s *Server) overviewReported(id Identity, reported []*mpi.File) {
	matched := ""
	s.mu.Lock()
	p := s.pods[id.Pod]
	if p == nil || p.key != id.Gateway || p.overviewSeen {
		s.mu.Unlock()
		return
	}
	p.overviewSeen = true
	if v := s.desired[p.key]; v != nil && p.inflight == nil && p.applied == "" && sameFiles(v.files, reported) {
		before := p.status(v.id)
		p.applied, p.settled, matched = v.id, v.id, v.id
		s.changed(p, before)
	}
	p.kick()
	s.mu.Unlock()
	s.observe(Event{Type: EventFilesReported, Key: id.Gateway, Pod: id.Pod, Version: matched})
}

// sameFiles says whether an agent's reported files are exactly want: the
// same paths with the same hashes, nothing more.
func sameFiles(want, got []*mpi.File) bool {
	if len(want) != len(got) {
		return false
	}
	hashes := make(map[string]string, len(got))
	for _, f := range got {
		hashes[f.GetFileMeta().GetName()] = f.GetFileMeta().GetHash()
	}
	for _, f := range want {
		if h, ok := hashes[f.GetFileMeta().GetName()]; !ok || h != f.GetFileMeta().GetHash() {
			return false
		}
	}
	return true
}

// attach makes a new Subscribe stream the pod's stream; an older one is
// told to end.
func (s *Server) attach(id Identity) (*stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[id.Pod]
	if p == nil || p.key != id.Gateway {
		return nil, status.Error(codes.FailedPrecondition, "no connection for this pod: call CreateConnection first")
	}
	before := p.status(s.desiredID(p.key))
	if p.stream != nil {
		close(p.stream.replaced)
	}
	st := newStream(p)
	p.stream = st
	if p.ttlTimer != nil {
		p.ttlTimer.Stop()
	}
	s.changed(p, before)
	p.kick()
	return st, nil
}

// detach ends st's hold on its pod.
func (s *Server) detach(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := st.pod
	if p.stream != st {
		return
	}
	before := p.status(s.desiredID(p.key))
	p.stream = nil
	s.armTTL(p)
	s.changed(p, before)
}

// armTTL forgets p when it stays disconnected for podTTL. s.mu held.
func (s *Server) armTTL(p *pod) {
	if p.ttlTimer != nil {
		p.ttlTimer.Stop()
	}
	p.ttlTimer = time.AfterFunc(s.podTTL, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pods[p.name] == p && p.stream == nil {
			s.log.V(1).Info("Forgetting disconnected pod", "pod", p.name, "gateway", p.key)
			s.dropPushes(p)
			p.stopTimers()
			delete(s.pods, p.name)
			s.notifier.Add(p.key)
		}
	})
}

// after kicks p after d, replacing the timer in *t. s.mu held.
func (s *Server) after(t **time.Timer, d time.Duration, p *pod) {
	if *t != nil {
		(*t).Stop()
	}
	*t = time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pods[p.name] == p {
			p.kick()
		}
	})
}

// desiredID is key's desired version id, "" if none. s.mu held.
func (s *Server) desiredID(key Key) string {
	if v := s.desired[key]; v != nil {
		return v.id
	}
	return ""
}

// changed schedules OnChange for p's key if p's status moved. s.mu held.
func (s *Server) changed(p *pod, before PodStatus) {
	if p.status(s.desiredID(p.key)) != before {
		s.notifier.Add(p.key)
	}
}
