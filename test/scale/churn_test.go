package scale

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/test/testenv"
)

// change is one churn change: what it did and how soon its route showed
// its new state.
type change struct {
	what    string
	latency time.Duration
	err     error
}

// churnSlots are the routes churn changes in turn: each state a change
// makes holds for churnSlots seconds, until the slot's next change, and must
// be served before then.
const churnSlots = 10

// churn changes one route every second: change n goes to route c<n%10>,
// whose changes cycle through create (to echo), switch its backend to
// echo2, delete. Meanwhile the load generator hits the first
// -scale.unchanged routes, which must answer every request.
func (b *big) churn(t *testing.T) {
	hosts := make([]string, *unchangedFlag)
	for i := range hosts {
		hosts[i] = routeHost(i)
	}
	l := startLoad(b.addr, hosts)
	profiled := profileCPU(t, *churnProfile, *churnFlag)
	defer profiled()
	node := nodeCPUSince()
	start := time.Now()
	var (
		mu      sync.Mutex
		changes []change
		wg      sync.WaitGroup
	)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for n := 0; time.Since(start) < *churnFlag; n++ {
		<-tick.C
		name := fmt.Sprintf("c%d", n%churnSlots)
		host := name + ".scale.test"
		var want state
		var what string
		at := time.Now()
		switch (n / churnSlots) % 3 {
		case 0:
			what, want = "create", servedByEcho
			rt.Create(t, testenv.HTTPRoute(b.ns, name, "gw", host, "/", "echo"))
		case 1:
			what, want = "update backends", servedByEcho2
			b.setBackend(t, name, "echo2")
		case 2:
			what, want = "delete", notFound
			r := &gatewayv1.HTTPRoute{}
			r.Namespace, r.Name = b.ns, name
			if err := rt.Client.Delete(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := reaches(b.addr, host, want, churnSlots*time.Second-pollInterval)
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, change{what: what + " " + name, latency: done.Sub(at), err: err})
		}()
	}
	wg.Wait()
	nodeShares := node()
	time.Sleep(time.Second)
	l.halt()

	var lat []time.Duration
	over := 0
	for _, c := range changes {
		if c.err != nil {
			t.Errorf("%s: %v", c.what, c.err)
			continue
		}
		lat = append(lat, c.latency)
		if c.latency > 2*time.Second {
			over++
		}
	}
	sent, non2xx, connErrs := l.sent.Load(), l.non2xx.Load(), l.connErrs.Load()
	if non2xx+connErrs > 0 {
		t.Errorf("%d of %d requests to unchanged routes failed during churn (%d non-2xx, %d connection errors), first: %s",
			non2xx+connErrs, sent, non2xx, connErrs, strings.Join(l.examples, "; "))
	}
	t.Logf("%d changes in %s: new state after p50 %s, p99 %s, max %s, %d over 2 s; %d requests to %d unchanged routes, %d non-2xx, %d connection errors",
		len(changes), *churnFlag, percentile(lat, .5), percentile(lat, .99), percentile(lat, 1), over, sent, len(hosts), non2xx, connErrs)
	report.add(fmt.Sprintf("churn: %d changes in %s, time to new state p50 / p99 / max", len(changes), *churnFlag),
		fmt.Sprintf("%s / %s / %s (%d over 2 s)", ms(percentile(lat, .5)), ms(percentile(lat, .99)), ms(percentile(lat, 1)), over), "every change within 2 s")
	report.add(fmt.Sprintf("churn: failed requests to %d unchanged routes", len(hosts)),
		fmt.Sprintf("%d non-2xx, %d connection errors of %d", non2xx, connErrs, sent), "0")
	t.Logf("node CPU during churn: %s", nodeShares)
	report.add("  node CPU during churn, cores by command", nodeShares, "")
}

// setBackend points route name's backend at Service svc.
func (b *big) setBackend(t *testing.T, name, svc string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r := &gatewayv1.HTTPRoute{}
		if err := rt.Client.Get(context.Background(), client.ObjectKey{Namespace: b.ns, Name: name}, r); err != nil {
			return err
		}
		r.Spec.Rules[0].BackendRefs[0].Name = gatewayv1.ObjectName(svc)
		return rt.Client.Update(context.Background(), r)
	})
	if err != nil {
		t.Fatal(err)
	}
}
