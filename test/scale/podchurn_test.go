package scale

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/testenv"
)

var (
	podsFlag     = flag.Int("scale.pods", 6, "backend pods behind every route of the big Gateway during pod churn")
	podChurnFlag = flag.Duration("scale.pod-churn", 20*time.Second, "how long one backend pod is replaced every second")
)

// podChurn replaces one of the pods behind every route each second (a
// graceful delete: echo-basic exits at once on SIGTERM; its Deployment
// makes another) for -scale.pod-churn, under steady load on one route:
// no request may fail, NGINX must not reload, and the endpoints must reach
// the data-plane pod fast; the data plane's CPU is compared with the same
// load without changes.
func (b *big) podChurn(t *testing.T) {
	b.scaleEcho(t, int32(*podsFlag))
	dp := testenv.DataPlanePod{Pod: b.pod, NGINX: b.master}
	prop := rt.WatchPropagation(t, b.ns, "echo", "http", config.UpstreamID(types.NamespacedName{Namespace: b.ns, Name: "echo"}, 8080), []testenv.DataPlanePod{dp})
	load := testenv.StartClients(t, testenv.ClientsOptions{Addr: b.addr, Host: routeHost(0), Path: "/",
		KeepAlive: 2, NewConnection: 2, Pause: 10 * time.Millisecond, Timeout: 30 * time.Second})
	_, managerPID := managerPod(t)
	window := min(*podChurnFlag, 30*time.Second)
	baseStart, baseCPU, baseManager := time.Now(), dp.CPU(), cpuOf(managerPID)
	time.Sleep(window)
	baseWall := time.Since(baseStart)
	baseline := float64(dp.CPU()-baseCPU) / float64(baseWall)
	baselineManager := float64(cpuOf(managerPID)-baseManager) / float64(baseWall)
	baseLoad := load.Report()

	workers := testenv.WatchWorkers(t, b.master)
	mgrPod, _ := managerPod(t)
	hopsBefore := hopBuckets(t, mgrPod)
	node := nodeCPUSince()
	profiled := profileCPU(t, *podProfile, *podChurnFlag)
	start, startCPU, startManager := time.Now(), dp.CPU(), cpuOf(managerPID)
	replaced := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(start) < *podChurnFlag {
		<-tick.C
		if b.replaceOldestEcho(t) {
			replaced++
		}
	}
	time.Sleep(2 * time.Second) // the last changes reach the pod
	wall := time.Since(start)
	profiled()
	hopsAfter := hopBuckets(t, mgrPod)
	churning := float64(dp.CPU()-startCPU) / float64(wall)
	churningManager := float64(cpuOf(managerPID)-startManager) / float64(wall)
	nodeShares := node()
	load.Stop()
	all := load.Report()
	reloads := workers.Started()
	times, superseded, missed := prop.Report()

	during := all.Sent - baseLoad.Sent
	t.Logf("pod churn: %d pods replaced in %s behind %d routes (%d pods); load: %s (%d during churn)",
		replaced, wall.Round(time.Second), *routesFlag, *podsFlag, all, during)
	t.Logf("endpoint propagation: %s; NGINX workers started: %d", prop, reloads)
	t.Logf("data plane CPU: %.3f cores with load alone, %.3f with load and churn; manager %.3f and %.3f; node: %s",
		baseline, churning, baselineManager, churningManager, nodeShares)
	report.add(fmt.Sprintf("pod churn: %d pods replaced in %s (%d pods behind every route), failed requests", replaced, wall.Round(time.Second), *podsFlag),
		fmt.Sprintf("%d of %d; slowest %s, %d over 1 s", all.Failed, all.Sent, ms(all.Max), all.SlowerThan1s), "0, none over 1 s")
	report.add("pod churn: NGINX reloads (workers started)", fmt.Sprint(reloads), "0")
	report.add("pod churn: endpoints at the data-plane pod, p50 / p99 / max",
		fmt.Sprintf("%s / %s / %s (%d changes; %d superseded, %d never held)", ms(testenv.Percentile(times, .5)), ms(testenv.Percentile(times, .99)),
			ms(testenv.Percentile(times, 1)), len(times), superseded, missed), "p99 ≤ 1 s")
	report.add("pod churn: the manager's hops, p50 / p99 (bucket bounds; observations)", hopReport(hopsBefore, hopsAfter), "")
	report.add("pod churn: data plane CPU, load alone / load and churn", fmt.Sprintf("%.3f / %.3f cores (%+.0f%%)", baseline, churning, 100*(churning-baseline)/baseline), "within 10%")
	report.add("pod churn: manager CPU, load alone / load and churn", fmt.Sprintf("%.3f / %.3f cores", baselineManager, churningManager), "")
	report.add("  node CPU during pod churn, cores by command", nodeShares, "")

	if all.Failed > 0 {
		t.Errorf("%d of %d requests failed: %v", all.Failed, all.Sent, all.FirstFailures)
	}
	if reloads > 0 {
		t.Errorf("NGINX started %d workers while only endpoints changed", reloads)
	}
	if missed > 0 || len(times) == 0 {
		t.Errorf("endpoint propagation: %s", prop)
	}
}

// cpuOf is the CPU time process pid used so far.
func cpuOf(pid int) time.Duration {
	_, cpu := testenv.ProcessTimes(pid)
	return cpu
}

// scaleEcho sets the echo Deployment's replicas and waits until they are
// all ready.
func (b *big) scaleEcho(t *testing.T, n int32) {
	t.Helper()
	d := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: b.ns, Name: "echo"}
	if err := rt.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To(n)
	if err := rt.Client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Minute, func() error {
		if err := rt.Client.Get(context.Background(), key, d); err != nil {
			return err
		}
		if s := d.Status; s.ReadyReplicas != n || s.Replicas != n {
			return fmt.Errorf("echo: %d of %d ready (%d in all)", s.ReadyReplicas, n, s.Replicas)
		}
		return nil
	})
}

// replaceOldestEcho deletes the oldest ready echo pod, if all are ready
// (a graceful delete: its Deployment replaces it); false when it waited.
func (b *big) replaceOldestEcho(t *testing.T) bool {
	t.Helper()
	pods := &corev1.PodList{}
	if err := rt.Client.List(context.Background(), pods, client.InNamespace(b.ns), client.MatchingLabels{"app": "echo"}); err != nil {
		t.Fatal(err)
	}
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && testenv.Ready(p) {
			ready = append(ready, p)
		}
	}
	if len(ready) < *podsFlag-1 {
		return false // the node is behind: do not take the Service down
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].CreationTimestamp.Before(&ready[j].CreationTimestamp) })
	if err := rt.Client.Delete(context.Background(), &ready[0]); err != nil {
		t.Fatal(err)
	}
	return true
}
