package podnet

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// ipTool runs iproute2's `ip`; the runtime has no netlink library, and `ip`
// in batch mode keeps a pod's setup to a few process starts.
type ipTool struct{ path string }

func findIP() (ipTool, error) {
	p, err := exec.LookPath("ip")
	if err != nil {
		return ipTool{}, fmt.Errorf("podnet: `ip` (iproute2) not found on PATH: %w", err)
	}
	return ipTool{path: p}, nil
}

// run runs one ip command with the given arguments.
func (t ipTool) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.path, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// batch runs several ip commands in one process, inside namespace ns (the
// host's when empty). It stops at the first failing command.
func (t ipTool) batch(ctx context.Context, ns string, lines []string) error {
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	cmd := exec.CommandContext(ctx, t.path, args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		where := "host"
		if ns != "" {
			where = "namespace " + ns
		}
		return fmt.Errorf("ip -batch in %s: %w: %s\ncommands:\n%s", where, err,
			strings.TrimSpace(errOut.String()), strings.Join(lines, "\n"))
	}
	return nil
}
