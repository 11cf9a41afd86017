package nginxtest_test

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// conf is a minimal configuration listening on port 80, with one more
// directive in its server.
func conf(directive string) []config.File {
	return []config.File{nginxtest.ServerConf("listen 80;\n" + directive)}
}

// TestBatchIsolatesFailures: each configuration of a batch is tested on
// its own: a rejected one does not affect the others, and all may bind
// the same port (each nginx -t runs after the previous one ends, in a
// network namespace of the batch's own).
func TestBatchIsolatesFailures(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	results, err := nginxtest.TestBatch([][]config.File{
		conf("return 200;"),
		conf("no_such_directive on;"),
		conf("return 204;"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("got %d results, want 3", len(results))
	}
	if !results[0].OK || !results[2].OK {
		t.Errorf("valid configurations rejected: %q, %q", results[0].Output, results[2].Output)
	}
	if results[1].OK || !strings.Contains(results[1].Output, "no_such_directive") {
		t.Errorf("the invalid configuration: OK %v, output %q", results[1].OK, results[1].Output)
	}
}
