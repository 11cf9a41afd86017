// Command gatewall is the Gatewall manager: a Kubernetes Gateway API controller
// whose data plane is NGINX.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := runManager(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gatewall:", err)
		os.Exit(1)
	}
}
