package endpointfeed

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/logsample"
)

// TestAckErrorsAreBoundedAndSampled: an authenticated pod that floods the
// manager with acknowledgements carrying errors of megabytes gets at most
// a burst of lines logged per interval, none longer than the bound, and
// what is kept and reported of its error is bounded too; another pod's
// lines are still logged. (Before, every acknowledgement was logged whole:
// 100 of them, 400 MiB of log.)
func TestAckErrorsAreBoundedAndSampled(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	var observed []Ack
	s, err := NewServer(Options{Identify: identifyByToken, Log: log, Observe: func(a Ack) { observed = append(observed, a) }})
	if err != nil {
		t.Fatal(err)
	}
	flooder, other := types.NamespacedName{Namespace: "ns", Name: "flooder"}, types.NamespacedName{Namespace: "ns", Name: "other"}
	s.mu.Lock()
	g := s.gatewayLocked(gw)
	g.pods[flooder] = &podStream{id: 1, pending: map[uint64]sent{}, refused: map[string]string{}}
	g.pods[other] = &podStream{id: 2, pending: map[uint64]sent{}, refused: map[string]string{}}
	s.mu.Unlock()
	send := func(pod types.NamespacedName, id, version uint64, msg string) {
		s.mu.Lock()
		g.pods[pod].pending[version] = sent{hash: "hash", full: true}
		s.mu.Unlock()
		s.ack(gw, pod, id, endpoints.Ack{Version: version, Error: msg})
	}

	huge := strings.Repeat("é", 2<<20) + "\xff" // 4 MiB, and a byte that is no UTF-8
	for v := range uint64(100) {
		send(flooder, 1, v+1, huge)
		s.ack(gw, flooder, 1, endpoints.Ack{Version: 1_000_000 + v}) // never sent
	}
	send(other, 2, 1, "NGINX refused the update: the shared dict is full")

	mu.Lock()
	defer mu.Unlock()
	if len(lines) != logsample.Burst+1 {
		t.Fatalf("%d lines logged, want the flooder's burst (%d) and the other pod's", len(lines), logsample.Burst)
	}
	for _, l := range lines {
		if len(l) > maxAckError+512 {
			t.Fatalf("a line of %d bytes logged", len(l))
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `"pod"="ns/other"`) || !strings.Contains(last, "shared dict is full") {
		t.Fatalf("the other pod's line: %s", last)
	}
	var kept string
	for _, p := range s.Status(gw).Pods {
		if p.Pod == flooder {
			kept = p.Error
		}
	}
	if len(kept) > maxAckError+64 || !utf8.ValidString(kept) || !strings.HasSuffix(kept, "bytes more)") {
		t.Fatalf("the flooder's error kept: %d bytes, valid UTF-8 %v, ends %q", len(kept), utf8.ValidString(kept), kept[max(0, len(kept)-32):])
	}
	if n := len(observed[0].Error); n > maxAckError+64 {
		t.Fatalf("an acknowledgement observed with an error of %d bytes", n)
	}
}

// TestBoundError: short errors are kept as they are; long ones are cut at
// a character boundary, saying how much was left out.
func TestBoundError(t *testing.T) {
	if got := boundError("refused"); got != "refused" {
		t.Errorf("a short error became %q", got)
	}
	long := strings.Repeat("a", maxAckError-1) + "é" + "tail"
	got := boundError(long)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, strings.Repeat("a", maxAckError-1)+"…") || !strings.HasSuffix(got, "(6 bytes more)") {
		t.Errorf("a long error became %q", got[maxAckError-8:])
	}
}
