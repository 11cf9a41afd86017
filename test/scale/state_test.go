package scale

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// A route's state as a client sees it: the status and a part of the body
// (echo-basic answers with its pod's name: "echo-..." or "echo2-...").
type state struct {
	code int
	sub  string
}

var (
	servedByEcho  = state{200, `"pod": "echo-`}
	servedByEcho2 = state{200, `"pod": "echo2-`}
	notFound      = state{404, ""}
)

func (s state) String() string { return fmt.Sprintf("%d %q", s.code, s.sub) }

// pollClient polls with keep-alive connections; a reload closes them, and
// a request that fails that way is simply sent again.
var pollClient = &http.Client{Timeout: 2 * time.Second}

// is says whether GET / with Host host through addr answers st now.
func is(addr, host string, st state) (bool, string) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Host = host
	resp, err := pollClient.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == st.code && strings.Contains(string(body), st.sub) {
		return true, ""
	}
	return false, fmt.Sprintf("%d %.100q", resp.StatusCode, body)
}

// pollInterval is how often a change is checked for: its latency is known
// to within it.
const pollInterval = 5 * time.Millisecond

// reaches polls until GET host through addr answers st and returns when it
// first did, or an error after timeout.
func reaches(addr, host string, st state, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, got := is(addr, host, st)
		if ok {
			return time.Now(), nil
		}
		last = got
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s through %s: after %s it answers %s, want %s", host, addr, timeout, last, st)
		}
		time.Sleep(pollInterval)
	}
}
