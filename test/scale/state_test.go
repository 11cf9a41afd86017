package scale

import (
	"fmt"
	"strings"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
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

// is says whether GET / with Host host through addr answers st now (a
// request on a keep-alive connection a reload closed fails, and is sent
// again at the next poll).
func is(addr, host string, st state) (bool, string) {
	code, body, err := testenv.Get(addr, host, "/")
	switch {
	case err != nil:
		return false, err.Error()
	case code == st.code && strings.Contains(body, st.sub):
		return true, ""
	}
	return false, fmt.Sprintf("%d %.100q", code, body)
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
