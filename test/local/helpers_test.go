package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
)

// eventually is testenv.Eventually.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, cond)
}

// get sends GET http://addr/ with Host host and returns the status and body.
func get(addr, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// kubectl runs bin/kubectl (hack/kube.sh builds it) against the shared
// runtime, as a user of `make run-local` would.
func kubectl(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(testenv.RepoRoot(), "bin", "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(os.TempDir(), "gatewall-"+shared.Name, "kubeconfig"))
	return cmd
}

// kubectlOutput runs kubectl and returns its output; it fails the test on error.
func kubectlOutput(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := kubectl(ctx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
