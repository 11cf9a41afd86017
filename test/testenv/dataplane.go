package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// DataPlanePod is a data-plane pod and its processes on this host.
type DataPlanePod struct {
	Pod corev1.Pod
	// NGINX is NGINX's master process.
	NGINX int
}

// DataPlanePods waits until the Gateway has want Ready data-plane pods and
// returns them with their NGINX masters.
func (l *Local) DataPlanePods(t *testing.T, gw types.NamespacedName, want int) []DataPlanePod {
	t.Helper()
	var out []DataPlanePod
	Eventually(t, 2*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := l.Client.List(context.Background(), pods, client.InNamespace(gw.Namespace),
			client.MatchingLabels{provisioner.GatewayNameLabel: gw.Name}); err != nil {
			return err
		}
		out = out[:0]
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || !Ready(p) {
				continue
			}
			pid := PodProcess(string(p.UID), "nginx: master")
			if pid == 0 {
				return fmt.Errorf("no NGINX master of pod %s", p.Name)
			}
			out = append(out, DataPlanePod{Pod: p, NGINX: pid})
		}
		if len(out) != want {
			return fmt.Errorf("%d Ready data-plane pods of %s, want %d", len(out), gw, want)
		}
		return nil
	})
	return out
}

// Endpoints reads the endpoints the pod's endpoints client last handed
// NGINX, from its state file (in the pod's run directory, through NGINX's
// root: /var/run is a link to /run there).
func (d DataPlanePod) Endpoints() (endpoints.Set, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/root%s", d.NGINX, strings.Replace(endpoints.StateFile, "/var/run/", "/run/", 1)))
	if err != nil {
		return nil, err
	}
	var u endpoints.Update
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, err
	}
	return u.Set, nil
}

// CPU is the CPU time NGINX used so far: its master, its workers, and the
// workers that exited (a reload's old ones).
func (d DataPlanePod) CPU() time.Duration {
	st, _ := ProcessStat(d.NGINX)
	cpu := st.CPU + st.Children
	for _, w := range Children(d.NGINX) {
		_, c := ProcessTimes(w)
		cpu += c
	}
	return cpu
}

// Workers watches an NGINX master's worker processes: every worker that
// appears after the watch starts is a new one (a reload, or a crashed
// worker replaced).
type Workers struct {
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	initial map[int]bool
	started []int
}

// WatchWorkers starts watching pid's workers, every 50 ms.
func WatchWorkers(t *testing.T, pid int) *Workers {
	w := &Workers{stop: make(chan struct{}), done: make(chan struct{}), initial: map[int]bool{}}
	for _, c := range Children(pid) {
		w.initial[c] = true
	}
	seen := map[int]bool{}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for _, c := range Children(pid) {
				if !w.initial[c] && !seen[c] {
					seen[c] = true
					w.mu.Lock()
					w.started = append(w.started, c)
					w.mu.Unlock()
				}
			}
		}
	}()
	t.Cleanup(w.Stop)
	return w
}

// Started counts the workers started since the watch began.
func (w *Workers) Started() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.started)
}

// Stop ends the watch.
func (w *Workers) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
		<-w.done
	}
}
