package scale

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
)

// The node is this machine: the runtime's processes (API server,
// containerd and its shims), the data planes' (nginx, nginx-agent, their
// entrypoints), the manager (gatewall) and the harness (scale.test) share
// its cores. A phase's report says where they went, by command name: on
// two cores that is what finds a cause (a status write the API server
// spends 0.4 s on, a readiness probe run as a command in 40 pods).

// nodeCPU reads every process's times from /proc.
func nodeCPU() map[int]testenv.ProcStat {
	out := map[int]testenv.ProcStat{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := testenv.ProcessStat(pid); ok { // else exited meanwhile
			out[pid] = st
		}
	}
	return out
}

// commandShare is what one command's processes used of the cores.
type commandShare struct {
	comm  string
	cores float64
}

// cpuByCommand is what each command used between two readings over wall,
// most first: a process's own time and its reaped children's. A process
// that started meanwhile counts whole (its start tells it from an earlier
// one with the same pid); one that ended counts in its parent once reaped
// (its whole life: an approximation for long-lived processes that end in
// the phase, such as NGINX's old workers).
func cpuByCommand(before, after map[int]testenv.ProcStat, wall time.Duration) []commandShare {
	used := map[string]time.Duration{}
	for pid, a := range after {
		d := a.CPU + a.Children
		if b, ok := before[pid]; ok && b.Start == a.Start {
			d -= b.CPU + b.Children
		}
		used[a.Comm] += d
	}
	var out []commandShare
	for comm, d := range used {
		if d > 0 {
			out = append(out, commandShare{comm, d.Seconds() / wall.Seconds()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].cores != out[j].cores {
			return out[i].cores > out[j].cores
		}
		return out[i].comm < out[j].comm
	})
	return out
}

// topShares writes the total and the first n shares, in cores.
func topShares(shares []commandShare, n int) string {
	total := 0.0
	for _, s := range shares {
		total += s.cores
	}
	parts := []string{fmt.Sprintf("%.2f in all", total)}
	for i, s := range shares {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", s.comm, s.cores))
	}
	return strings.Join(parts, ", ")
}

// nodeCPUSince starts a reading; the function it returns says what the
// node's commands used since, in cores (topShares).
func nodeCPUSince() func() string {
	before, start := nodeCPU(), time.Now()
	return func() string { return topShares(cpuByCommand(before, nodeCPU(), time.Since(start)), 8) }
}

// TestCPUByCommand: a command's processes add up; a process that started
// between the readings counts whole, one whose pid was reused counts as
// new; shares are in cores, most first; the machine's own reading finds
// this test's process.
func TestCPUByCommand(t *testing.T) {
	type p = testenv.ProcStat
	before := map[int]p{
		1: {Comm: "nginx", Start: 10 * time.Second, CPU: 2 * time.Second},
		2: {Comm: "nginx", Start: 11 * time.Second, CPU: 1 * time.Second},
		3: {Comm: "kube-apiserver", Start: 5 * time.Second, CPU: 10 * time.Second},
		4: {Comm: "old", Start: 7 * time.Second, CPU: 3 * time.Second},
	}
	after := map[int]p{
		1: {Comm: "nginx", Start: 10 * time.Second, CPU: 3 * time.Second},          // +1 s
		2: {Comm: "nginx", Start: 11 * time.Second, CPU: 1500 * time.Millisecond},  // +0.5 s
		3: {Comm: "kube-apiserver", Start: 5 * time.Second, CPU: 14 * time.Second}, // +4 s
		4: {Comm: "sh", Start: 99 * time.Second, CPU: 200 * time.Millisecond},      // pid 4 reused: 0.2 s, new
		5: {Comm: "runc", Start: 100 * time.Second, CPU: 300 * time.Millisecond},   // new: 0.3 s
		6: {Comm: "idle", Start: 1 * time.Second, CPU: 0},                          // used nothing
	}
	got := cpuByCommand(before, after, 2*time.Second)
	want := []commandShare{{"kube-apiserver", 2}, {"nginx", 0.75}, {"runc", 0.15}, {"sh", 0.1}}
	if len(got) != len(want) {
		t.Fatalf("shares %v, want %v", got, want)
	}
	for i := range want {
		if got[i].comm != want[i].comm || math.Abs(got[i].cores-want[i].cores) > 1e-9 {
			t.Errorf("share %d: %v, want %v", i, got[i], want[i])
		}
	}
	if s := topShares(got, 2); s != "3.00 in all, kube-apiserver 2.00, nginx 0.75" {
		t.Errorf("topShares: %q", s)
	}
	self := nodeCPU()[os.Getpid()]
	if self.Comm == "" || self.CPU <= 0 {
		t.Errorf("this process's reading: %+v", self)
	}
}
