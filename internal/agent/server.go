package agent

import (
	"cmp"
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/coalesce"
	"github.com/gatewall/gatewall/internal/datafile"
)

// Defaults of the Options durations.
const (
	DefaultPushTimeout   = 3 * time.Minute
	DefaultPodTTL        = 5 * time.Minute
	DefaultOverviewGrace = 2 * time.Second
)

// Options configure a Server.
type Options struct {
	// Authenticator checks the agents' tokens. Required.
	Authenticator Authenticator
	// TLS is the server's TLS configuration: NewReloadingTLSConfig, or one
	// whose GetCertificate serves a rotated certificate without a restart.
	// Required; TLS 1.3 is enforced whatever it says.
	TLS *tls.Config
	// OnChange is called when anything Status(key) returns changes. It is
	// called from a goroutine of its own, never under a lock, and never twice
	// at once; changes in quick succession may be reported once.
	OnChange func(Key)
	// Observe, if set, receives every protocol event, synchronously from the
	// goroutine handling it (never under a lock); it must return quickly.
	Observe func(Event)
	Log     logr.Logger

	// PushTimeout is how long a push may stay unanswered before it is sent
	// again (DefaultPushTimeout when zero). It must cover the agent fetching
	// every file, testing and reloading NGINX and monitoring it.
	PushTimeout time.Duration
	// PodTTL is how long a disconnected pod stays in Status (DefaultPodTTL
	// when zero).
	PodTTL time.Duration
	// OverviewGrace is how long the first push to a freshly started agent
	// waits for the agent's report of its files (DefaultOverviewGrace when
	// zero).
	OverviewGrace time.Duration
	// Services, if set, registers more services on the server's gRPC
	// server (the endpoint feed): they are reached on the same port and
	// authenticated as the agents are (IdentityFrom).
	Services func(grpc.ServiceRegistrar)
	// AnyPeerAddress accepts an identity from any peer address. By
	// default an RPC is refused unless its peer is at one of the
	// addresses of the pod its token is bound to (Identity.Addresses): a
	// network that translates the pods' addresses (SNAT) on the way to
	// the manager needs this, at the cost of that check.
	AnyPeerAddress bool
}

// Server is the control plane's endpoint for nginx-agent v3: it serves
// mpi.v1 CommandService and FileService and pushes configurations.
type Server struct {
	gate     *gate
	services func(grpc.ServiceRegistrar)
	tls      *tls.Config
	log      logr.Logger
	observe  func(Event)
	notifier *coalesce.Calls[Key]

	pushTimeout   time.Duration
	podTTL        time.Duration
	overviewGrace time.Duration
	now           func() time.Time

	mu       sync.Mutex
	desired  map[Key]*version
	retained map[Key]map[string]*version // versions whose files are kept, by id
	pods     map[types.NamespacedName]*pod
}

// NewServer returns a Server; Serve starts serving.
func NewServer(opts Options) (*Server, error) {
	if opts.Authenticator == nil {
		return nil, errors.New("agent server: an Authenticator is required")
	}
	if opts.TLS == nil {
		return nil, errors.New("agent server: a TLS configuration is required (NewReloadingTLSConfig)")
	}
	tlsConfig := opts.TLS.Clone()
	tlsConfig.MinVersion = tls.VersionTLS13
	s := &Server{
		services:      opts.Services,
		tls:           tlsConfig,
		log:           opts.Log,
		observe:       opts.Observe,
		notifier:      coalesce.NewCalls(opts.OnChange, compareKeys),
		pushTimeout:   cmp.Or(opts.PushTimeout, DefaultPushTimeout),
		podTTL:        cmp.Or(opts.PodTTL, DefaultPodTTL),
		overviewGrace: cmp.Or(opts.OverviewGrace, DefaultOverviewGrace),
		now:           time.Now,
		desired:       make(map[Key]*version),
		retained:      make(map[Key]map[string]*version),
		pods:          make(map[types.NamespacedName]*pod),
	}
	if s.observe == nil {
		s.observe = func(Event) {}
	}
	// The gate reads the clock through s.now, which tests move.
	s.gate = newGate(opts.Authenticator, s.log, s.observe, func() time.Time { return s.now() })
	s.gate.anyAddress = opts.AnyPeerAddress
	return s, nil
}

// SetConfig makes files the desired configuration of key's data plane and
// returns its version (datafile.Version of the files as given). Content
// identical to the desired one changes nothing and is not pushed again.
// Files that ValidateFiles would reject are left out (and logged).
func (s *Server) SetConfig(key Key, files []datafile.File) string {
	v, err := newVersion(files)
	if err != nil {
		s.log.Error(err, "Invalid files left out of the configuration", "gateway", key, "version", v.id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.desired[key]; old != nil {
		if old.id == v.id {
			return v.id
		}
		s.unref(key, old)
	}
	s.desired[key] = s.ref(key, v)
	s.log.V(1).Info("Desired configuration set", "gateway", key, "version", v.id, "files", len(v.files))
	s.notifier.Add(key)
	for _, p := range s.pods {
		if p.key == key {
			p.kick()
		}
	}
	return v.id
}

// DeleteConfig forgets key's desired configuration. Its pods keep running
// what they run; nothing more is pushed to them until SetConfig.
func (s *Server) DeleteConfig(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.desired[key]
	if old == nil {
		return
	}
	delete(s.desired, key)
	s.unref(key, old)
	s.notifier.Add(key)
}

// Status returns the state of key's data plane.
func (s *Server) Status(key Key) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{}
	if v := s.desired[key]; v != nil {
		st.Version = v.id
	}
	for _, p := range s.pods {
		if p.key == key {
			st.Pods = append(st.Pods, p.status(st.Version))
		}
	}
	slices.SortFunc(st.Pods, func(a, b PodStatus) int {
		return cmp.Or(cmp.Compare(a.Pod.Namespace, b.Pod.Namespace), cmp.Compare(a.Pod.Name, b.Pod.Name))
	})
	return st
}

// Connected counts, by Gateway, the pods whose agents have a Subscribe
// stream open.
func (s *Server) Connected() map[Key]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[Key]int{}
	for _, p := range s.pods {
		if p.stream != nil {
			out[p.key]++
		}
	}
	return out
}

// ref retains v's files for key, reusing an equal retained version; s.mu held.
func (s *Server) ref(key Key, v *version) *version {
	byID := s.retained[key]
	if byID == nil {
		byID = make(map[string]*version)
		s.retained[key] = byID
	}
	if have := byID[v.id]; have != nil {
		v = have
	} else {
		byID[v.id] = v
	}
	v.refs++
	return v
}

// unref releases one reference; the files go with the last one. s.mu held.
func (s *Server) unref(key Key, v *version) {
	v.refs--
	if v.refs > 0 {
		return
	}
	delete(s.retained[key], v.id)
	if len(s.retained[key]) == 0 {
		delete(s.retained, key)
	}
}

// file returns the content of name with that hash among key's retained
// versions.
func (s *Server) file(key Key, name, hash string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.retained[key] {
		if data, _, ok := v.lookup(name, hash); ok {
			return data, true
		}
	}
	return nil, false
}

// retainedVersion returns key's retained version id, if any.
func (s *Server) retainedVersion(key Key, id string) *version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retained[key][id]
}
