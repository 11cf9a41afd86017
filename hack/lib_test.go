// Package hack holds the toolchain scripts; these tests drive hack/lib.sh,
// which every script sources, through bash.
package hack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bash runs script after sourcing lib.sh, with env as the whole environment
// (plus PATH), and returns stdout, stderr and the error.
func bash(t *testing.T, env []string, script string) (string, string, error) {
	t.Helper()
	lib, err := filepath.Abs("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `source "$0"; `+script, lib)
	cmd.Env = append(env, "PATH="+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestUnsetHome: with no HOME at all (env -i), lib.sh still finds a cache
// and Go its caches; it used to abort on `set -u`.
func TestUnsetHome(t *testing.T) {
	out, stderr, err := bash(t, nil, `echo "$HOME"; echo "$GATEWALL_CACHE"; go env GOCACHE GOMODCACHE`)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	lines := strings.Fields(out)
	if len(lines) != 4 {
		t.Fatalf("want HOME, the cache and Go's two caches, got %q", out)
	}
	for _, l := range lines {
		if !filepath.IsAbs(l) {
			t.Errorf("%q is not an absolute path (output %q)", l, out)
		}
	}
	if !strings.HasPrefix(lines[1], lines[0]+"/") {
		t.Errorf("the cache %s is not under HOME %s", lines[1], lines[0])
	}
}

// TestConcurrentBuildsBuildOnce: three runs that want the same uncached tool
// at once build it once; the others wait, then link the result into bin/.
func TestConcurrentBuildsBuildOnce(t *testing.T) {
	tmp := t.TempDir()
	env := []string{"HOME=" + tmp, "GATEWALL_CACHE=" + filepath.Join(tmp, "cache")}
	// Each run builds into the shared cache and links into its own bin/.
	script := `
GATEWALL_BIN="$1"; mkdir -p "$GATEWALL_BIN"
dir="$GATEWALL_CACHE/fake-v1"
reuse "$dir" fake-v1 fake && exit 0
echo build >> "$GATEWALL_CACHE/builds"
sleep 1
mkdir -p "$dir" && printf '#!/bin/sh\n' > "$dir/fake" && chmod +x "$dir/fake"
link_tools "$dir" fake
`
	failures := make(chan string, 3)
	for i := range 3 {
		go func() {
			bin := filepath.Join(tmp, "bin", string(rune('a'+i)))
			_, stderr, err := bash(t, env, `set -- "`+bin+`"; `+script)
			if err != nil {
				failures <- err.Error() + ": " + stderr
				return
			}
			failures <- ""
		}()
	}
	for range 3 {
		if f := <-failures; f != "" {
			t.Fatalf("a run failed: %s", f)
		}
	}
	builds, err := os.ReadFile(filepath.Join(tmp, "cache", "builds"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(builds), "build"); n != 1 {
		t.Errorf("the tool was built %d times, want once", n)
	}
	for _, b := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(tmp, "bin", b, "fake")); err != nil {
			t.Errorf("bin/%s/fake: %v", b, err)
		}
	}
}

// TestQuietShowsFailures: quiet hides the output of a command that succeeds
// and shows it when the command fails (nginx-agent.sh used to send `go get`
// errors to /dev/null).
func TestQuietShowsFailures(t *testing.T) {
	_, stderr, err := bash(t, []string{"HOME=" + t.TempDir()}, `quiet sh -c 'echo all fine'`)
	if err != nil || strings.Contains(stderr, "all fine") {
		t.Errorf("success: err %v, stderr %q; want no error and no output", err, stderr)
	}
	_, stderr, err = bash(t, []string{"HOME=" + t.TempDir()}, `quiet sh -c 'echo proxy refused the module >&2; exit 3'`)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("failure: err %v, want exit status 3", err)
	}
	if !strings.Contains(stderr, "proxy refused the module") {
		t.Errorf("failure: stderr %q does not show the command's output", stderr)
	}
}

// TestTimedReleasesStderr: timed's heartbeat leaves no sleep behind holding
// stderr, so a reader of the pipe sees its end when the build ends, not up to
// 30 seconds later.
func TestTimedReleasesStderr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lib, _ := filepath.Abs("lib.sh")
	cmd := exec.CommandContext(ctx, "bash", "-c", `source "$0"; timed "nothing" true 2>&1 | cat`, lib)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the pipe stayed open after timed returned:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "built nothing") {
		t.Fatalf("timed: %v\n%s", err, out)
	}
}
