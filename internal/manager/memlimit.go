package manager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitFraction of the container's memory limit becomes the Go
// runtime's soft memory limit: the garbage collector works harder as the
// heap nears it, so that a burst of translations (5,000 routes allocate
// ~50 MB a time) is collected before the kernel kills the process at the
// container's limit. The rest is for memory outside the Go heap.
const memoryLimitFraction = 0.9

// unlimited is where cgroup v1 reports "no limit" (a page-rounded
// MaxInt64); anything this large is no limit.
const unlimited = 1 << 62

// SetMemoryLimit gives the Go runtime a soft memory limit of 90% of the
// memory limit of the cgroup the process runs in (its container's), read
// below cgroupRoot (/sys/fs/cgroup): cgroup v2's memory.max, or v1's
// memory/memory.limit_in_bytes. GOMEMLIMIT, when set, wins and nothing is
// changed. It returns the limit set, 0 when none was.
func SetMemoryLimit(cgroupRoot string) (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit, err := cgroupMemoryLimit(cgroupRoot)
	if err != nil || limit == 0 {
		return 0, err
	}
	soft := int64(float64(limit) * memoryLimitFraction)
	debug.SetMemoryLimit(soft)
	return soft, nil
}

// cgroupMemoryLimit is the memory limit of the cgroup below root, in
// bytes; 0 when there is none or no cgroup file says.
func cgroupMemoryLimit(root string) (int64, error) {
	for _, f := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a number of bytes", f, v)
		}
		if n <= 0 || n >= unlimited {
			return 0, nil
		}
		return n, nil
	}
	return 0, nil
}
