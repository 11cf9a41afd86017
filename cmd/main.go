// Command gatewall is the Gatewall manager: a Kubernetes Gateway API controller
// whose data plane is NGINX. `gatewall render` previews, with no cluster, the
// NGINX configuration and statuses Gatewall would produce for some manifests.
// (The local runtime is its own command, cmd/gatewall-local.)
package main

import (
	"fmt"
	"os"
)

func main() {
	args := os.Args[1:]
	run := runManager
	if len(args) > 0 {
		switch args[0] {
		case "render":
			run, args = runRender, args[1:]
		}
	}
	if err := run(args); err != nil {
		fmt.Fprintln(os.Stderr, "gatewall:", err)
		os.Exit(1)
	}
}
