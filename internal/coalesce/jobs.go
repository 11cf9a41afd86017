package coalesce

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
)

// Jobs runs, in the background, the newest job handed to it for each key:
// a job replaces one of the same key that has not started, one key's jobs
// never run at once (a job handed while one runs starts after it), and a
// job that fails is retried with backoff unless a newer one replaced it.
// It runs on the leader only, like the reconcilers that hand it jobs.
type Jobs[K comparable] struct {
	what    string
	log     logr.Logger
	workers int
	queue   workqueue.TypedRateLimitingInterface[K]

	// pace, when above zero, spaces one key's jobs by what they cost: after
	// a job that took d, the key's next job starts no sooner than pace×d
	// (at most maxPause) after it ended, and takes in every change handed
	// meanwhile. A job that is quick (a small Gateway's statuses) is
	// followed at once; one the API server takes long over (a Gateway with
	// 64 listeners: the API server re-checks all of its spec's rules, which
	// compare every listener with every other, on each status write, 0.3 s
	// of its CPU when idle and up to 0.8 s while NGINX reloads on the same
	// cores) is not repeated for every change of a change a second.
	pace     float64
	maxPause time.Duration

	mu        sync.Mutex
	pending   map[K]func(context.Context) error
	notBefore map[K]time.Time
}

// NewJobs makes a runner of workers workers; the manager runs it (mgr.Add).
// what names it in logs and in the workqueue's metrics.
func NewJobs[K comparable](what string, log logr.Logger, workers int) *Jobs[K] {
	return &Jobs[K]{
		what: what, log: log, workers: workers, pending: map[K]func(context.Context) error{}, notBefore: map[K]time.Time{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[K](),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: what}),
	}
}

// Paced has j space each key's jobs by pace times what the last one took,
// at most maxPause (see Jobs.pace). Call it before Start.
func (j *Jobs[K]) Paced(pace float64, maxPause time.Duration) *Jobs[K] {
	j.pace, j.maxPause = pace, maxPause
	return j
}

// Hand makes job k's newest.
func (j *Jobs[K]) Hand(k K, job func(context.Context) error) {
	j.mu.Lock()
	j.pending[k] = job
	j.mu.Unlock()
	j.queue.Add(k)
}

// Start runs the workers until ctx ends.
func (j *Jobs[K]) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range j.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	j.queue.ShutDown()
	wg.Wait()
	return nil
}

// NeedLeaderElection: only the leader reconciles, and writes statuses.
func (j *Jobs[K]) NeedLeaderElection() bool { return true }

// next runs one key's pending job; false when the queue is shut down. The
// queue never hands one key to two workers at once.
func (j *Jobs[K]) next(ctx context.Context) bool {
	k, quit := j.queue.Get()
	if quit {
		return false
	}
	defer j.queue.Done(k)
	j.mu.Lock()
	if wait := time.Until(j.notBefore[k]); wait > 0 {
		// Too soon after the key's last job: come back when it is time
		// (the pending job stays, and newer ones replace it meanwhile).
		j.mu.Unlock()
		j.queue.AddAfter(k, wait)
		return true
	}
	delete(j.notBefore, k)
	job, ok := j.pending[k]
	delete(j.pending, k)
	j.mu.Unlock()
	if !ok {
		return true
	}
	start := time.Now()
	err := job(ctx)
	j.pause(k, time.Since(start))
	if err != nil {
		j.log.Error(err, "Retrying with backoff", "jobs", j.what)
		j.mu.Lock()
		if _, newer := j.pending[k]; !newer {
			j.pending[k] = job
		}
		j.mu.Unlock()
		j.queue.AddRateLimited(k)
		return true
	}
	j.queue.Forget(k)
	return true
}

// pause keeps k's next job from starting before pace times took has
// passed. The key is queued again for then, so that its entry is removed
// even when no job comes meanwhile.
func (j *Jobs[K]) pause(k K, took time.Duration) {
	wait := j.pauseAfter(took)
	if wait <= 0 {
		return
	}
	j.mu.Lock()
	j.notBefore[k] = time.Now().Add(wait)
	j.mu.Unlock()
	j.queue.AddAfter(k, wait)
}

// pauseAfter is how long a key waits after a job that took took.
func (j *Jobs[K]) pauseAfter(took time.Duration) time.Duration {
	return min(time.Duration(j.pace*float64(took)), j.maxPause)
}
