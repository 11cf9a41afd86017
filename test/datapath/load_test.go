package datapath

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// request is what every client sends: the sample route's host, as a
// browser's keep-alive request would carry it (no body).
const request = "GET / HTTP/1.1\r\nHost: echo.example.com\r\nUser-Agent: gatewall-datapath\r\nAccept: */*\r\n\r\n"

// result is one run of the load: requests answered 200 in the duration,
// their latencies' percentiles, and the failures (any is a defect of the
// configuration under test, not noise).
type result struct {
	requests int
	elapsed  time.Duration
	p50, p99 time.Duration
	failures int
	firstErr error
	// cpu is the NGINX workers' CPU time during the run.
	cpu time.Duration
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// cpuPerRequest is the workers' CPU time per request, which the machine's
// other load disturbs less than the requests per second.
func (r result) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

// load runs clients keep-alive clients against addr (dialled with dial)
// for d; each sends a request, reads the whole answer, and sends the next.
// A client whose connection NGINX closes (keepalive_requests) dials again,
// as a browser does.
func load(dial func(network, addr string) (net.Conn, error), addr string, clients int, d time.Duration) result {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		lat      []time.Duration
		failures atomic.Int64
		firstErr error
	)
	fail := func(err error) {
		if failures.Add(1) == 1 {
			mu.Lock()
			firstErr = err
			mu.Unlock()
		}
	}
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, 1<<16)
			var (
				c  net.Conn
				br *bufio.Reader
			)
			defer func() {
				if c != nil {
					c.Close()
				}
				mu.Lock()
				lat = append(lat, own...)
				mu.Unlock()
			}()
			for time.Now().Before(deadline) {
				if c == nil {
					var err error
					if c, err = dial("tcp", addr); err != nil {
						fail(err)
						time.Sleep(10 * time.Millisecond)
						continue
					}
					br = bufio.NewReaderSize(c, 16<<10)
				}
				sent := time.Now()
				closed, err := exchange(c, br)
				if err != nil {
					fail(err)
					c.Close()
					c = nil
					continue
				}
				own = append(own, time.Since(sent))
				if closed {
					c.Close()
					c = nil
				}
			}
		}()
	}
	wg.Wait()
	r := result{requests: len(lat), elapsed: time.Since(start), failures: int(failures.Load()), firstErr: firstErr}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// exchange sends one request on c and reads its answer; closed says the
// server ends the connection after it.
func exchange(c net.Conn, br *bufio.Reader) (closed bool, err error) {
	if _, err := io.WriteString(c, request); err != nil {
		return false, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return false, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.Close, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.Close, nil
}

// backend is a tiny HTTP server standing in for an echo pod: it answers
// every request 200 with a short body and counts the connections it
// accepted (NGINX's keep-alive to upstreams reuses them).
type backend struct {
	srv   *http.Server
	conns atomic.Int64
}

func serveBackend(l net.Listener) *backend {
	b := &backend{}
	body := []byte(`{"path":"/","host":"echo.example.com","namespace":"default","pod":"echo"}` + "\n")
	b.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				b.conns.Add(1)
			}
		},
	}
	go func() { _ = b.srv.Serve(l) }()
	return b
}
