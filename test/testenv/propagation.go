package testenv

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Propagation measures, for every change of a Service's endpoints the API
// server announces, how long until each data-plane pod's NGINX holds them:
// the EndpointSlices are watched, and each pod's endpoints (its endpoints
// client's state file, written just before NGINX takes them) read every
// 5 ms.
type Propagation struct {
	upstream string // the upstream's ID
	port     string // the Service port's name

	mu      sync.Mutex
	changes []change                 // by time
	seen    map[string][]observation // by pod
	slices  map[string]*discoveryv1.EndpointSlice
}

type change struct {
	at   time.Time
	want []string
}

type observation struct {
	at  time.Time
	eps []string
}

// WatchPropagation starts watching the slices of Service svc (its port
// named port) and the upstream's endpoints in the pods.
func (l *Local) WatchPropagation(t *testing.T, ns, svc, port, upstream string, pods []DataPlanePod) *Propagation {
	t.Helper()
	p := &Propagation{upstream: upstream, port: port, seen: map[string][]observation{}, slices: map[string]*discoveryv1.EndpointSlice{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := client.NewWithWatch(l.Config, client.Options{Scheme: l.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := w.Watch(ctx, &discoveryv1.EndpointSliceList{}, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: svc})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer watch.Stop()
		for ev := range watch.ResultChan() {
			s, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				continue
			}
			p.mu.Lock()
			if ev.Type == "DELETED" {
				delete(p.slices, s.Name)
			} else {
				p.slices[s.Name] = s
			}
			want := p.serving()
			if n := len(p.changes); n == 0 || !slices.Equal(p.changes[n-1].want, want) {
				p.changes = append(p.changes, change{at: time.Now(), want: want})
			}
			p.mu.Unlock()
		}
	}()
	for _, pod := range pods {
		go func() {
			var last []string
			for ctx.Err() == nil {
				set, err := pod.Endpoints()
				if err == nil {
					eps := set[upstream].Endpoints
					if !slices.Equal(eps, last) || last == nil {
						p.mu.Lock()
						p.seen[pod.Pod.Name] = append(p.seen[pod.Pod.Name], observation{at: time.Now(), eps: eps})
						p.mu.Unlock()
						last = append([]string{}, eps...)
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	return p
}

// serving is what the slices say should serve, as Kubernetes means it:
// the ready endpoints, or the serving terminating ones when none is ready.
// Called under the lock.
func (p *Propagation) serving() []string {
	var ready, draining []string
	for _, s := range p.slices {
		var port int32
		for _, sp := range s.Ports {
			if sp.Name != nil && *sp.Name == p.port && sp.Port != nil {
				port = *sp.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			c := ep.Conditions
			isReady := c.Ready == nil || *c.Ready
			serving := isReady
			if c.Serving != nil {
				serving = *c.Serving
			}
			for _, a := range ep.Addresses {
				hp := net.JoinHostPort(a, strconv.Itoa(int(port)))
				switch {
				case isReady:
					ready = append(ready, hp)
				case serving:
					draining = append(draining, hp)
				}
			}
		}
	}
	out := ready
	if len(out) == 0 {
		out = draining
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Changes is how many changes of the endpoints the API server announced.
func (p *Propagation) Changes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.changes)
}

// Report gives, per change and pod, the time until the pod held the
// change's endpoints; a change the next one replaced before a pod held it
// is not timed for that pod (superseded), nor is one a pod never held.
func (p *Propagation) Report() (times []time.Duration, superseded, missed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.changes {
		if i == 0 {
			continue // the state before the test's changes
		}
		var next time.Time
		if i+1 < len(p.changes) {
			next = p.changes[i+1].at
		}
		for _, obs := range p.seen {
			found := false
			for j, o := range obs {
				// The pod may hold the change before the test's watch
				// announces it: what it holds when the change is
				// announced counts, as does what it takes after.
				if j+1 < len(obs) && !obs[j+1].at.After(c.at) {
					continue
				}
				if !next.IsZero() && o.at.After(next) {
					break
				}
				if slices.Equal(o.eps, c.want) {
					times = append(times, max(o.at.Sub(c.at), 0))
					found = true
					break
				}
			}
			switch {
			case found:
			case !next.IsZero():
				superseded++
			default:
				missed++
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times, superseded, missed
}

// Percentile is the p-th (0 to 1) of sorted durations; 0 of none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*p)]
}

func (p *Propagation) String() string {
	times, superseded, missed := p.Report()
	return fmt.Sprintf("%d changes timed: p50 %v, p99 %v, max %v (%d superseded, %d never held)", len(times),
		Percentile(times, 0.5).Round(time.Millisecond), Percentile(times, 0.99).Round(time.Millisecond),
		Percentile(times, 1).Round(time.Millisecond), superseded, missed)
}
