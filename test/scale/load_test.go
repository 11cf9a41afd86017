package scale

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// load is a bounded load on a set of hosts through one address: some
// workers reuse keep-alive connections, others open a new connection for
// every request. Each worker sends one request at a time and pauses between
// requests, so that the load generator does not starve the runtime of the
// machine's two cores.
type load struct {
	sent, non2xx, connErrs atomic.Int64

	mu       sync.Mutex
	examples []string // the first failures, for the report

	stop chan struct{}
	wg   sync.WaitGroup
}

const (
	loadWorkers = 2 // of each kind
	loadPause   = 10 * time.Millisecond
)

// startLoad sends GET / for hosts, in rotation, to addr.
func startLoad(addr string, hosts []string) *load {
	l := &load{stop: make(chan struct{})}
	keepAlive := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers}}
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for w := 0; w < 2*loadWorkers; w++ {
		c := keepAlive
		if w%2 == 1 {
			c = fresh
		}
		l.wg.Add(1)
		go l.work(c, addr, hosts, w)
	}
	return l
}

func (l *load) work(c *http.Client, addr string, hosts []string, first int) {
	defer l.wg.Done()
	for i := first; ; i++ {
		select {
		case <-l.stop:
			return
		case <-time.After(loadPause):
		}
		host := hosts[i%len(hosts)]
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		l.sent.Add(1)
		resp, err := c.Do(req)
		if err != nil {
			l.connErrs.Add(1)
			l.note(fmt.Sprintf("%s: %v", host, err))
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			l.non2xx.Add(1)
			l.note(fmt.Sprintf("%s: %d", host, resp.StatusCode))
		}
	}
}

func (l *load) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.examples) < 10 {
		l.examples = append(l.examples, time.Now().Format("15:04:05.000 ")+s)
	}
}

// halt stops the load and waits for the requests under way.
func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}
