package controller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/coalesce"
)

// TestDataPlaneReportRepeatsTheLastStatusJob: a data plane's report runs
// the Gateway's last status job again instead of reconciling the Gateway;
// before any job, and after a Gateway is gone (its clearing job is not
// repeatable), the report reconciles it.
func TestDataPlaneReportRepeatsTheLastStatusJob(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &GatewayReconciler{statuses: coalesce.NewJobs[types.NamespacedName]("test", logr.Discard(), 2)}
	go func() { _ = r.statuses.Start(ctx) }()
	key := types.NamespacedName{Namespace: "ns", Name: "gw"}
	ran := make(chan string, 10)
	job := func(name string) func(context.Context) error {
		return func(context.Context) error { ran <- name; return nil }
	}
	next := func() string {
		t.Helper()
		select {
		case name := <-ran:
			return name
		case <-time.After(5 * time.Second):
			t.Fatal("no status job ran")
			return ""
		}
	}

	if reqs := r.dataPlaneReported(ctx, key); len(reqs) != 1 || reqs[0].NamespacedName != key {
		t.Fatalf("before any status job, a report gave %v, want a reconcile of %s", reqs, key)
	}
	if err := r.handStatuses(ctx, key, true, job("statuses")); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "statuses" {
		t.Fatalf("ran %s", got)
	}
	for range 2 {
		if reqs := r.dataPlaneReported(ctx, key); len(reqs) != 0 {
			t.Fatalf("a report reconciled %v, want the last status job again", reqs)
		}
		if got := next(); got != "statuses" {
			t.Fatalf("a report ran %s, want the last status job", got)
		}
	}
	if reqs := r.dataPlaneReported(ctx, types.NamespacedName{Namespace: "ns", Name: "other"}); len(reqs) != 1 {
		t.Fatalf("a report on another Gateway gave %v, want its reconcile", reqs)
	}
	if err := r.handStatuses(ctx, key, false, job("clear")); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "clear" {
		t.Fatalf("ran %s", got)
	}
	if reqs := r.dataPlaneReported(ctx, key); len(reqs) != 1 {
		t.Fatalf("after the Gateway's clearing job, a report gave %v, want a reconcile", reqs)
	}
	select {
	case name := <-ran:
		t.Fatalf("%s ran again after the Gateway's clearing job", name)
	case <-time.After(100 * time.Millisecond):
	}
}
