package endpointfeed

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/coalesce"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/logsample"
)

// Identify says which data-plane pod, of which Gateway, a stream's
// authenticated peer is (the agent server's identity of the request).
type Identify func(ctx context.Context) (pod, gateway types.NamespacedName, ok bool)

// Options configure a Server.
type Options struct {
	// Identify is required.
	Identify Identify
	// OnChange, if set, is called (from a goroutine of its own, never under
	// a lock; changes of a Gateway while its call waits are one call) when
	// what Status reports of a Gateway's pods changes in a way
	// statuses tell: a pod's client connected or left, or an update failed
	// or stopped failing; not on every acknowledgement.
	OnChange func(gateway types.NamespacedName)
	// Observe, if set, receives each acknowledgement with the time from
	// the version's Set to it; it must return quickly.
	Observe func(Ack)
	Log     logr.Logger
}

// Ack is one pod's acknowledgement of a version.
type Ack struct {
	Gateway, Pod types.NamespacedName
	Version      uint64
	// Latency is the time from the Set that made the version to the ack.
	Latency time.Duration
	// Error says why the pod could not apply it ("" when it did), cut to
	// maxAckError bytes.
	Error string
	// Refused counts the upstreams of a version applied that the pod
	// could not apply (they keep the endpoints they had).
	Refused int
}

// Server streams each Gateway's endpoints to its pods. Its methods are
// safe for concurrent use.
type Server struct {
	opts Options
	// changed calls OnChange, per Gateway, outside the server's lock.
	changed *coalesce.Calls[types.NamespacedName]
	// streams numbers the streams, so that one replaced by a reconnect of
	// its pod does not remove its successor when it ends.
	streams atomic.Uint64

	// logs samples what each pod's acknowledgements log: an authenticated
	// pod can send them as fast as it likes.
	logs *logsample.Keyed[types.NamespacedName]

	mu       sync.Mutex
	gateways map[types.NamespacedName]*gateway
}

// maxAckError bounds the bytes of a pod's error kept, reported and logged:
// an acknowledgement may carry up to the agent port's message limit
// (4 MiB). NGINX's own refusals, which the client passes on, are at most
// 4 KiB; their first 1 KiB says what it is.
const maxAckError = 1 << 10

// maxPodsLogged bounds the pods whose log lines are sampled apart.
const maxPodsLogged = 4096

// boundError is err as kept and logged: valid UTF-8 of at most maxAckError
// bytes, saying how many were left out.
func boundError(err string) string {
	err = strings.ToValidUTF8(err, "\uFFFD")
	if len(err) <= maxAckError {
		return err
	}
	cut := maxAckError
	for cut > 0 && !utf8.RuneStart(err[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes more)", err[:cut], len(err)-cut)
}

// gateway is one Gateway's newest set and the state of its pods' streams.
type gateway struct {
	set endpoints.Set
	// resolver is how its pods resolve the set's names, sent with every
	// update.
	resolver endpoints.Resolver
	// keys are its remote key sets, sent with the first update of a
	// stream and when they change; keysHash tells them apart.
	keys     endpoints.KeySources
	keysHash string
	// setHash is of the set and resolver; hash of them and the keys.
	setHash, hash string
	version       uint64
	// has is false until the first Set: streams of pods that connect
	// earlier (just after a manager restart) wait, and the pods keep what
	// they have.
	has bool
	// setAt is when each version not yet acknowledged by every pod was set.
	setAt map[uint64]time.Time
	// changed is closed (and replaced) at each new version.
	changed chan struct{}
	pods    map[types.NamespacedName]*podStream
}

// podStream is one pod's stream.
type podStream struct {
	// id tells a stream from the one that replaced it (a reconnect).
	id      uint64
	acked   uint64
	hash    string // of the set acked
	err     string
	since   time.Time
	pending map[uint64]sent // versions sent, not acknowledged
	// resync: the pod refused an update, so what it holds is not what it
	// was sent; its next update is a whole set.
	resync bool
	// refused are the upstreams the pod could not apply, by ID, with why:
	// they keep older endpoints until an update sets or deletes them
	// again. They are not sent again unless they change: the pod would
	// refuse the same endpoints again.
	refused map[string]string
	// unresolved are the upstreams some of whose names the pod cannot
	// resolve, by ID, with why, as its last acknowledgement or report said;
	// keySets the remote key sets it could not fetch, the same way.
	unresolved, keySets map[string]string
}

// sent is what a version sent to a pod was.
type sent struct {
	hash string
	// full: it replaced every upstream; else touched are the upstreams it
	// set or deleted.
	full    bool
	touched []string
}

// PodStatus is what one pod holds.
type PodStatus struct {
	Pod types.NamespacedName
	// Version is the newest version it acknowledged applying; Current
	// says it is the Gateway's newest set, every upstream of it.
	Version uint64
	Current bool
	// Error says why it could not apply the newest update it was sent
	// (at most maxAckError bytes of what the pod said).
	Error string
	// Refused are the upstreams it could not apply, sorted by name: they
	// keep older endpoints (or none).
	Refused []RefusedUpstream
	// Unresolved are the upstreams some of whose DNS names it cannot
	// resolve, sorted by name: they serve without those names' answers
	// (none: 503). It is the Service's doing (or its DNS's), not the
	// data plane's: its endpoints are applied.
	Unresolved []RefusedUpstream
	// KeySets are the remote JWT key sets it could not fetch (ID, the
	// URL as Name, why), sorted: their filters' requests are answered
	// 503 until it has a set, or verified with the last one it fetched.
	KeySets []RefusedUpstream
}

// RefusedUpstream is an upstream a pod could not apply.
type RefusedUpstream struct {
	ID, Name string
	// Reason says why.
	Reason string
}

// Status is what a Gateway's pods hold of its endpoints.
type Status struct {
	// Version is the Gateway's newest version; 0 before the first Set.
	Version uint64
	// Pods are the pods with a stream open, sorted by name.
	Pods []PodStatus
}

// NewServer returns a Server; Register it on the agent server's gRPC server.
func NewServer(opts Options) (*Server, error) {
	if opts.Identify == nil {
		return nil, errors.New("endpoint feed: Identify is required")
	}
	return &Server{opts: opts, changed: coalesce.NewCalls(opts.OnChange, compareGateways),
		logs:     logsample.NewKeyed[types.NamespacedName](time.Now, "linesNotLogged", maxPodsLogged),
		gateways: map[types.NamespacedName]*gateway{}}, nil
}

// changedFor queues an OnChange of gw (one for changes queued before it is
// called); called under the lock, it never blocks.
func (s *Server) changedFor(gw types.NamespacedName) { s.changed.Add(gw) }

func compareGateways(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// gatewayLocked returns gw's state, made when missing. Called under the lock.
func (s *Server) gatewayLocked(gw types.NamespacedName) *gateway {
	g := s.gateways[gw]
	if g == nil {
		g = &gateway{changed: make(chan struct{}), pods: map[types.NamespacedName]*podStream{}, setAt: map[uint64]time.Time{}}
		s.gateways[gw] = g
	}
	return g
}

// Set makes set the Gateway's endpoints, their names resolved as r says,
// and returns their version. A set and resolver equal to the newest are no
// new version: pods are sent nothing.
func (s *Server) Set(gw types.NamespacedName, set endpoints.Set, r endpoints.Resolver) uint64 {
	setHash := set.Hash() + resolverHash(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gatewayLocked(gw)
	if g.has && g.setHash == setHash {
		return g.version
	}
	g.set, g.resolver, g.setHash, g.has = set, r, setHash, true
	return g.newVersionLocked()
}

// SetKeySources makes ks the Gateway's remote key sets (JWT filters'),
// which its pods fetch: sent with its next version, a new one when they
// changed and its endpoints were set (Set). Called before Set, when both
// change, they go in one update.
func (s *Server) SetKeySources(gw types.NamespacedName, ks endpoints.KeySources) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gatewayLocked(gw)
	if h := ks.Hash(); h != g.keysHash {
		g.keys, g.keysHash = ks, h
		if g.has {
			return g.newVersionLocked()
		}
	}
	return g.version
}

// newVersionLocked makes the gateway's state a new version, which its
// streams send. Called under the lock.
func (g *gateway) newVersionLocked() uint64 {
	g.hash = g.setHash
	if g.keysHash != "" {
		g.hash += "+keys" + g.keysHash
	}
	g.version++
	g.setAt[g.version] = time.Now()
	close(g.changed)
	g.changed = make(chan struct{})
	return g.version
}

// Forget drops a Gateway that is gone; its pods' streams wait for a new set.
func (s *Server) Forget(gw types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gateways[gw]
	if g == nil {
		return
	}
	if len(g.pods) == 0 {
		delete(s.gateways, gw)
		return
	}
	g.set, g.hash, g.setHash, g.has = nil, "", "", false
	g.keys, g.keysHash = nil, ""
	clear(g.setAt)
}

// Status reports what the Gateway's pods hold.
func (s *Server) Status(gw types.NamespacedName) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gateways[gw]
	if g == nil {
		return Status{}
	}
	st := Status{Version: g.version}
	for pod, p := range g.pods {
		ps := PodStatus{Pod: pod, Version: p.acked, Current: g.has && p.hash == g.hash && len(p.refused) == 0, Error: p.err,
			Refused: upstreamsOf(g.set, p.refused), Unresolved: upstreamsOf(g.set, p.unresolved), KeySets: keySetsOf(g.keys, p.keySets)}
		st.Pods = append(st.Pods, ps)
	}
	sort.Slice(st.Pods, func(i, j int) bool { return st.Pods[i].Pod.String() < st.Pods[j].Pod.String() })
	return st
}

// upstreamsOf names the upstreams of reasons, sorted by name.
func upstreamsOf(set endpoints.Set, reasons map[string]string) []RefusedUpstream {
	var out []RefusedUpstream
	for id, why := range reasons {
		out = append(out, RefusedUpstream{ID: id, Name: set[id].Name, Reason: why})
	}
	sort.Slice(out, func(i, j int) bool {
		return cmp.Or(cmp.Compare(out[i].Name, out[j].Name), cmp.Compare(out[i].ID, out[j].ID)) < 0
	})
	return out
}

// keySetsOf names the key sets of reasons by their URL, sorted.
func keySetsOf(keys endpoints.KeySources, reasons map[string]string) []RefusedUpstream {
	var out []RefusedUpstream
	for id, why := range reasons {
		out = append(out, RefusedUpstream{ID: id, Name: keys[id].URI, Reason: why})
	}
	sort.Slice(out, func(i, j int) bool {
		return cmp.Or(cmp.Compare(out[i].Name, out[j].Name), cmp.Compare(out[i].ID, out[j].ID)) < 0
	})
	return out
}

// resolverHash tells resolvers apart ("" for the zero one, so that the
// hash of a set without one is the set's own).
func resolverHash(r endpoints.Resolver) string {
	if reflect.DeepEqual(r, endpoints.Resolver{}) {
		return ""
	}
	data, err := json.Marshal(r)
	if err != nil {
		panic("endpointfeed: a resolver does not encode: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return "+" + hex.EncodeToString(sum[:8])
}

// Statuses reports Status for every Gateway the server knows.
func (s *Server) Statuses() map[types.NamespacedName]Status {
	s.mu.Lock()
	keys := make([]types.NamespacedName, 0, len(s.gateways))
	for gw := range s.gateways {
		keys = append(keys, gw)
	}
	s.mu.Unlock()
	out := make(map[types.NamespacedName]Status, len(keys))
	for _, gw := range keys {
		out[gw] = s.Status(gw)
	}
	return out
}

// watch serves one pod's stream until it ends.
func (s *Server) watch(stream grpc.ServerStream) error {
	ctx := stream.Context()
	pod, gw, ok := s.opts.Identify(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "endpoint feed: the stream's peer is not a data-plane pod")
	}
	log := s.opts.Log.WithValues("gateway", gw.String(), "pod", pod.String())
	id := s.streams.Add(1)
	s.mu.Lock()
	g := s.gatewayLocked(gw)
	g.pods[pod] = &podStream{id: id, since: time.Now(), pending: map[uint64]sent{}, refused: map[string]string{}, unresolved: map[string]string{},
		keySets: map[string]string{}}
	s.changedFor(gw)
	s.mu.Unlock()
	log.V(1).Info("Endpoints client connected")
	defer func() {
		s.mu.Lock()
		if g := s.gateways[gw]; g != nil && g.pods[pod] != nil && g.pods[pod].id == id {
			delete(g.pods, pod)
			if len(g.pods) == 0 && !g.has {
				delete(s.gateways, gw)
			}
		}
		s.changedFor(gw)
		s.mu.Unlock()
		log.V(1).Info("Endpoints client disconnected")
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	recvErr := make(chan error, 1)
	acked := make(chan struct{}, 1)
	go func() { recvErr <- s.receiveAcks(stream, gw, pod, id, acked) }()

	// One update is in flight at a time: versions set meanwhile are
	// coalesced into the next, which takes the pod to the newest set.
	var last endpoints.Set
	var lastResolver endpoints.Resolver
	var lastVersion uint64
	lastKeys := ""
	first, inflight := true, false
	for {
		s.mu.Lock()
		g := s.gatewayLocked(gw)
		changed, set, resolver, version := g.changed, g.set, g.resolver, g.version
		keys, keysHash := g.keys, g.keysHash
		p := g.pods[pod]
		send := g.has && !inflight && p != nil && p.id == id && (first || version != lastVersion)
		hash := g.hash
		if send && p.resync {
			p.resync, first = false, true
		}
		s.mu.Unlock()
		if send {
			u := endpoints.Diff(last, set, version)
			if first {
				u = endpoints.Snapshot(set, version)
			}
			resolverChanged := first || !reflect.DeepEqual(resolver, lastResolver)
			u.Resolver = &resolver
			// The key sources go whole, and only when the pod's are not
			// these (a stream's first update tells it it has none).
			keysChanged := first || keysHash != lastKeys
			if keysChanged {
				ks := keys
				if ks == nil {
					ks = endpoints.KeySources{}
				}
				u.KeySources = &ks
			}
			s.sending(gw, pod, id, version, sent{hash: hash, full: u.Full, touched: append(u.Set.IDs(), u.Deleted...)})
			last, lastResolver, lastVersion, lastKeys, first = set, resolver, version, keysHash, false
			if !u.Empty() || resolverChanged || keysChanged {
				if err := stream.SendMsg(&u); err != nil {
					return err
				}
				inflight = true
			}
		}
		select {
		case <-changed:
		case <-acked:
			inflight = false
		case err := <-recvErr:
			if err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// sending records a version sent to a pod's stream, for its ack.
func (s *Server) sending(gw, pod types.NamespacedName, id, version uint64, what sent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.gateways[gw]; g != nil && g.pods[pod] != nil && g.pods[pod].id == id {
		g.pods[pod].pending[version] = what
	}
}

// receiveAcks records a pod's acknowledgements until its stream ends.
func (s *Server) receiveAcks(stream grpc.ServerStream, gw, pod types.NamespacedName, id uint64, acked chan<- struct{}) error {
	for {
		var a endpoints.Ack
		if err := stream.RecvMsg(&a); err != nil {
			return err
		}
		s.ack(gw, pod, id, a)
		select {
		case acked <- struct{}{}:
		default:
		}
	}
}

func (s *Server) ack(gw, pod types.NamespacedName, id uint64, a endpoints.Ack) {
	s.mu.Lock()
	g := s.gateways[gw]
	var p *podStream
	if g != nil {
		p = g.pods[pod]
	}
	if p == nil || p.id != id {
		s.mu.Unlock()
		return
	}
	version, sentIt := p.pending[a.Version]
	if !sentIt && a.Version <= p.acked && a.Error == "" {
		// A report: what the pod resolves changed since it acknowledged
		// the version (an older one's is stale: the ack of a newer came).
		if a.Version == p.acked && (p.setUnresolved(g.set, a.Unresolved) || p.setKeySets(g.keys, a.KeySets)) {
			s.changedFor(gw)
		}
		s.mu.Unlock()
		return
	}
	if !sentIt {
		s.mu.Unlock()
		s.logs.Info(pod, s.opts.Log, "Endpoints client acknowledged a version it was not sent", "gateway", gw.String(), "pod", pod.String(), "version", a.Version)
		return
	}
	a.Error = boundError(a.Error)
	for v := range p.pending {
		if v <= a.Version {
			delete(p.pending, v)
		}
	}
	wasErr, wasRefused := p.err, len(p.refused)
	p.err = a.Error
	unresolvedChanged := false
	if a.Error == "" {
		p.acked, p.hash = a.Version, version.hash
		unresolvedChanged = p.setUnresolved(g.set, a.Unresolved)
		unresolvedChanged = p.setKeySets(g.keys, a.KeySets) || unresolvedChanged
		// What the version set or deleted is what the pod now holds,
		// but for the upstreams it refused again.
		if version.full {
			clear(p.refused)
		}
		touched := map[string]bool{}
		for _, id := range version.touched {
			delete(p.refused, id)
			touched[id] = true
		}
		// Only what the version set can be refused: a pod names no more.
		for id, why := range a.Refused {
			if touched[id] {
				p.refused[id] = cutReason(why)
			}
		}
	} else {
		// Sent again whole with the next version (not at once: the same
		// set would be refused again).
		p.resync = true
	}
	var latency time.Duration
	if at, ok := g.setAt[a.Version]; ok {
		latency = time.Since(at)
	}
	s.pruneLocked(g)
	if (wasErr == "") != (a.Error == "") || wasRefused != 0 || len(a.Refused) != 0 || unresolvedChanged {
		s.changedFor(gw)
	}
	s.mu.Unlock()
	if a.Error != "" {
		s.logs.Info(pod, s.opts.Log, "A data-plane pod could not apply endpoints; it keeps the endpoints it had",
			"gateway", gw.String(), "pod", pod.String(), "version", a.Version, "error", a.Error)
	}
	for _, id := range slices.Sorted(maps.Keys(a.Refused)) {
		s.opts.Log.Info("A data-plane pod could not apply the endpoints of an upstream; it keeps those it had",
			"gateway", gw.String(), "pod", pod.String(), "version", a.Version, "upstream", id, "error", a.Refused[id])
	}
	if s.opts.Observe != nil {
		s.opts.Observe(Ack{Gateway: gw, Pod: pod, Version: a.Version, Latency: latency, Error: a.Error, Refused: len(a.Refused)})
	}
}

// setUnresolved keeps what a pod says does not resolve: of the upstreams
// of set only (a pod names no more), each reason cut. It says whether it
// changed.
func (p *podStream) setUnresolved(set endpoints.Set, unresolved map[string]string) bool {
	next := map[string]string{}
	for id, why := range unresolved {
		if _, ok := set[id]; ok {
			next[id] = cutReason(why)
		}
	}
	if maps.Equal(next, p.unresolved) {
		return false
	}
	p.unresolved = next
	return true
}

// setKeySets keeps the key sets a pod says it cannot fetch, as
// setUnresolved does.
func (p *podStream) setKeySets(keys endpoints.KeySources, failing map[string]string) bool {
	next := map[string]string{}
	for id, why := range failing {
		if _, ok := keys[id]; ok {
			next[id] = cutReason(why)
		}
	}
	if maps.Equal(next, p.keySets) {
		return false
	}
	p.keySets = next
	return true
}

// maxVersionsTimed bounds the versions whose Set time is kept for a Gateway
// whose pods do not acknowledge them (a pod that hangs).
const maxVersionsTimed = 1024

// pruneLocked forgets the Set times of versions every pod acknowledged.
func (s *Server) pruneLocked(g *gateway) {
	oldest := g.version
	for _, p := range g.pods {
		if p.acked < oldest {
			oldest = p.acked
		}
	}
	for v := range g.setAt {
		if v < oldest || len(g.setAt) > maxVersionsTimed && v < g.version {
			delete(g.setAt, v)
		}
	}
}

// maxReason bounds why a pod refused an upstream, as it is kept and shown.
const maxReason = 256

func cutReason(why string) string {
	if len(why) > maxReason {
		return why[:maxReason] + "..."
	}
	return why
}

// maxRefusedShown bounds the upstreams a pod status names in a message.
const maxRefusedShown = 3

// String describes a pod status for messages.
func (p PodStatus) String() string {
	if p.Error != "" {
		return fmt.Sprintf("pod %s could not apply the newest endpoints and keeps those of version %d: %s", p.Pod.Name, p.Version, p.Error)
	}
	if len(p.Refused) > 0 {
		var names []string
		for _, r := range p.Refused[:min(len(p.Refused), maxRefusedShown)] {
			names = append(names, fmt.Sprintf("%s (%s)", cmp.Or(r.Name, r.ID), r.Reason))
		}
		more := ""
		if n := len(p.Refused) - maxRefusedShown; n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		return fmt.Sprintf("pod %s holds endpoints version %d but for upstreams it could not apply, which keep older endpoints: %s%s",
			p.Pod.Name, p.Version, strings.Join(names, ", "), more)
	}
	return fmt.Sprintf("pod %s holds endpoints version %d", p.Pod.Name, p.Version)
}

// KeySetsString describes the key sets a pod cannot fetch, for messages;
// "" when there are none.
func (p PodStatus) KeySetsString() string {
	if len(p.KeySets) == 0 {
		return ""
	}
	var names []string
	for _, r := range p.KeySets[:min(len(p.KeySets), maxRefusedShown)] {
		names = append(names, r.Reason)
	}
	more := ""
	if n := len(p.KeySets) - maxRefusedShown; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("pod %s cannot fetch JWT key sets: %s%s", p.Pod.Name, strings.Join(names, ", "), more)
}

// UnresolvedString describes the upstreams whose names a pod cannot
// resolve, for messages; "" when there are none.
func (p PodStatus) UnresolvedString() string {
	if len(p.Unresolved) == 0 {
		return ""
	}
	var names []string
	for _, r := range p.Unresolved[:min(len(p.Unresolved), maxRefusedShown)] {
		names = append(names, fmt.Sprintf("%s (%s)", cmp.Or(r.Name, r.ID), r.Reason))
	}
	more := ""
	if n := len(p.Unresolved) - maxRefusedShown; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("pod %s cannot resolve DNS names of upstreams, which serve without their answers: %s%s", p.Pod.Name, strings.Join(names, ", "), more)
}
