package testenv

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var httpClient = &http.Client{Timeout: 5 * time.Second}

// Get sends GET http://addr/path with Host host; it returns status and body.
func Get(addr, host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Serves waits until GET host/path through addr answers want with a body
// containing sub.
func Serves(t *testing.T, addr, host, path string, want int, sub string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		code, body, err := Get(addr, host, path)
		if err != nil {
			return err
		}
		if code != want || !strings.Contains(body, sub) {
			return fmt.Errorf("GET %s%s: %d %q, want %d with %q", host, path, code, Trunc(body), want, sub)
		}
		return nil
	})
}

// Trunc cuts s to 200 bytes for a message.
func Trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Load is a steady load: one GET every 20 ms, each expected to answer 200.
type Load struct {
	sent, failed atomic.Int64
	stop         chan struct{}
	done         chan struct{}
	once         sync.Once
}

// StartLoad starts sending GET host/path to addr; the test's end stops it
// if Stop was not called. Failed requests are logged.
func StartLoad(t *testing.T, addr, host, path string) *Load {
	l := &Load{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			l.sent.Add(1)
			if code, _, err := Get(addr, host, path); err != nil || code != 200 {
				l.failed.Add(1)
				t.Logf("request failed: %d %v", code, err)
			}
		}
	}()
	t.Cleanup(func() { l.Stop() })
	return l
}

// Stop stops the load and returns how many requests were sent and how many
// failed.
func (l *Load) Stop() (sent, failed int64) {
	l.once.Do(func() { close(l.stop); <-l.done })
	return l.sent.Load(), l.failed.Load()
}
