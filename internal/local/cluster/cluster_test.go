package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMissingBinaryNamesTheScriptThatBuildsIt(t *testing.T) {
	bin := t.TempDir()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if err := os.WriteFile(filepath.Join(bin, b), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Options{BinDir: bin, WorkDir: t.TempDir()}.withDefaults()
	if err == nil || !strings.Contains(err.Error(), "kube-scheduler") || !strings.Contains(err.Error(), "hack/kube.sh kube-scheduler") {
		t.Fatalf("err = %v; want it to name kube-scheduler and hack/kube.sh", err)
	}
}

func TestKillLeftoversKillsOnlyProcessesOfTheWorkDir(t *testing.T) {
	work := t.TempDir()
	mine := exec.Command("sh", "-c", "sleep 60", "leftover", filepath.Join(work, "etcd"))
	other := exec.Command("sh", "-c", "sleep 60", "other", filepath.Join(t.TempDir(), "etcd"))
	for _, c := range []*exec.Cmd{mine, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer other.Process.Kill()
	// Between fork and exec a child's command line is still the test's:
	// wait until both show theirs, as a leftover of an earlier run does.
	for _, c := range []*exec.Cmd{mine, other} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.Process.Pid), "cmdline"))
			if strings.Contains(string(cmdline), "sleep 60") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d never ran sh: %q", c.Process.Pid, cmdline)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := killLeftovers(work); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mine.Wait() }()
	select {
	case err := <-done:
		if ws, ok := mine.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("leftover ended with %v, want SIGKILL", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("leftover process still running")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("process of another work dir was killed: %v", err)
	}
}

func TestWorkDirIsOnlyClearedWhenItIsOurs(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareWorkDir(foreign); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("foreign dir: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "precious")); err != nil {
		t.Fatalf("foreign file touched: %v", err)
	}
	if err := prepareWorkDir("/tmp"); err == nil {
		t.Error("a top-level directory accepted")
	}

	ours := filepath.Join(t.TempDir(), "work")
	if err := prepareWorkDir(ours); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ours, "etcd-data"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareWorkDir(ours); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ours, "etcd-data")); !os.IsNotExist(err) {
		t.Errorf("state of the earlier run not cleared: %v", err)
	}
}
