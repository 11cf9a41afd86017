package node

import (
	"fmt"
	"os/exec"
)

// tools are the host programs the node runs: the shell that prepares a
// container's namespaces, mount, and nsenter for exec probes and hooks.
type tools struct {
	sh, mount, nsenter string
}

func findTools() (tools, error) {
	var t tools
	for _, x := range []struct {
		name string
		dst  *string
		pkg  string
	}{
		{"sh", &t.sh, "dash or bash"},
		{"mount", &t.mount, "util-linux (mount)"},
		{"nsenter", &t.nsenter, "util-linux"},
	} {
		p, err := exec.LookPath(x.name)
		if err != nil {
			return t, fmt.Errorf("node: %s not found on PATH (install %s): %w", x.name, x.pkg, err)
		}
		*x.dst = p
	}
	return t, nil
}
