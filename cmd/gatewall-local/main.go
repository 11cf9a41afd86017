// Command gatewall-local runs Gatewall the way a user runs it, on one
// machine: `gatewall-local run` (the default; `make run-local`) starts a
// single-node Kubernetes cluster, deploys Gatewall into it as `make deploy`
// does and applies the sample; `gatewall-local images` builds the images it
// runs (`make images`). It is not part of the manager's binary.
package main

import (
	"fmt"
	"os"
)

func main() {
	args := os.Args[1:]
	run := runLocal
	if len(args) > 0 {
		switch args[0] {
		case "run":
			args = args[1:]
		case "images":
			run, args = runImages, args[1:]
		}
	}
	if err := run(args); err != nil {
		fmt.Fprintln(os.Stderr, "gatewall-local:", err)
		os.Exit(1)
	}
}
