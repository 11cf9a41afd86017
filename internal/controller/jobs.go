package controller

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
)

// jobs runs, in the background, the newest job handed to it for each key:
// a job replaces one of the same key that has not started, one key's jobs
// never run at once (a job handed while one runs starts after it), and a
// job that fails is retried with backoff unless a newer one replaced it.
// It runs on the leader only, like the reconcilers that hand it jobs.
type jobs[K comparable] struct {
	what    string
	log     logr.Logger
	workers int
	queue   workqueue.TypedRateLimitingInterface[K]

	mu      sync.Mutex
	pending map[K]func(context.Context) error
}

// newJobs makes a runner of workers workers; the manager runs it (mgr.Add).
// what names it in logs and in the workqueue's metrics.
func newJobs[K comparable](what string, log logr.Logger, workers int) *jobs[K] {
	return &jobs[K]{
		what: what, log: log, workers: workers, pending: map[K]func(context.Context) error{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[K](),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: what}),
	}
}

// hand makes job k's newest.
func (j *jobs[K]) hand(k K, job func(context.Context) error) {
	j.mu.Lock()
	j.pending[k] = job
	j.mu.Unlock()
	j.queue.Add(k)
}

// Start runs the workers until ctx ends.
func (j *jobs[K]) Start(ctx context.Context) error {
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
func (j *jobs[K]) NeedLeaderElection() bool { return true }

// next runs one key's pending job; false when the queue is shut down. The
// queue never hands one key to two workers at once.
func (j *jobs[K]) next(ctx context.Context) bool {
	k, quit := j.queue.Get()
	if quit {
		return false
	}
	defer j.queue.Done(k)
	j.mu.Lock()
	job, ok := j.pending[k]
	delete(j.pending, k)
	j.mu.Unlock()
	if !ok {
		return true
	}
	if err := job(ctx); err != nil {
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
