// Package envtest tests Gatewall against a real API server: the CRDs' schema
// and CEL rules, the kustomize deployment and samples, and the manager.
package envtest

import (
	"os"
	"testing"

	"github.com/gatewall/gatewall/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }
