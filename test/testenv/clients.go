package testenv

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Clients is steady load on one route: clients that keep their connection
// alive and clients that open a new connection for every request, each
// sending a request, reading the answer, pausing, and again. Every request
// must answer 200; each one's time and outcome are kept.
type Clients struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	times    []time.Duration
	failures []string
	failed   int
}

// ClientsOptions shape the load.
type ClientsOptions struct {
	// Addr, Host and Path are where requests go.
	Addr, Host, Path string
	// KeepAlive and NewConnection count the clients of each kind.
	KeepAlive, NewConnection int
	// Pause is each client's pause between requests.
	Pause time.Duration
	// Timeout bounds a request: a request still waiting then failed.
	Timeout time.Duration
}

// StartClients starts the load; Stop ends it (the test's end does).
func StartClients(t interface{ Cleanup(func()) }, o ClientsOptions) *Clients {
	c := &Clients{stop: make(chan struct{})}
	for i := 0; i < o.KeepAlive+o.NewConnection; i++ {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableKeepAlives: i >= o.KeepAlive}
		client := &http.Client{Transport: tr, Timeout: o.Timeout}
		c.wg.Add(1)
		go c.run(client, o)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

func (c *Clients) run(client *http.Client, o ClientsOptions) {
	defer c.wg.Done()
	defer client.CloseIdleConnections()
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+o.Addr+o.Path, nil)
		req.Host = o.Host
		start := time.Now()
		resp, err := client.Do(req)
		problem := ""
		switch {
		case err != nil:
			problem = err.Error()
		default:
			body, readErr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || readErr != nil {
				problem = fmt.Sprintf("%d %v %s", resp.StatusCode, readErr, Trunc(strings.TrimSpace(string(body))))
			}
		}
		took := time.Since(start)
		c.mu.Lock()
		c.times = append(c.times, took)
		if problem != "" {
			c.failed++
			if len(c.failures) < 10 {
				c.failures = append(c.failures, fmt.Sprintf("%s: %s", start.Format("15:04:05.000"), problem))
			}
		}
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-time.After(o.Pause):
		}
	}
}

// Stop ends the load and waits for the requests in flight.
func (c *Clients) Stop() {
	c.mu.Lock()
	select {
	case <-c.stop:
		c.mu.Unlock()
		return
	default:
	}
	close(c.stop)
	c.mu.Unlock()
	c.wg.Wait()
}

// LoadReport is what the clients saw.
type LoadReport struct {
	Sent, Failed  int
	P50, P99, Max time.Duration
	FirstFailures []string
	SlowerThan1s  int
}

// Report summarizes the requests so far.
func (c *Clients) Report() LoadReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := LoadReport{Sent: len(c.times), Failed: c.failed, FirstFailures: slices.Clone(c.failures)}
	if len(c.times) == 0 {
		return r
	}
	times := slices.Clone(c.times)
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	r.P50, r.P99, r.Max = times[len(times)/2], times[len(times)*99/100], times[len(times)-1]
	for _, d := range times {
		if d > time.Second {
			r.SlowerThan1s++
		}
	}
	return r
}

func (r LoadReport) String() string {
	return fmt.Sprintf("%d requests, %d failed, %d slower than 1 s; p50 %v, p99 %v, slowest %v",
		r.Sent, r.Failed, r.SlowerThan1s, r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.Max.Round(time.Millisecond))
}
