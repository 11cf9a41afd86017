package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the interrupts helper when the test binary is started as
// one (see TestSecondInterruptQuits).
func TestMain(m *testing.M) {
	if os.Getenv("GATEWALL_TEST_INTERRUPTS") == "1" {
		ctx := interrupts(func() { fmt.Println("stopping") })
		fmt.Println("ready")
		<-ctx.Done()
		select {} // a stop that hangs
	}
	os.Exit(m.Run())
}

// TestSecondInterruptQuits: the first Ctrl-C starts an orderly stop; a
// second one quits at once, even when the stop hangs.
func TestSecondInterruptQuits(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GATEWALL_TEST_INTERRUPTS=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 4)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- strings.TrimSpace(s.Text())
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("helper said %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("helper did not say %q", want)
		}
	}
	expect("ready")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	expect("stopping")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the first Ctrl-C quit at once (%v): the stop must run", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("the helper exited 0 after the second Ctrl-C")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Ctrl-C did not quit a hung stop")
	}
}
