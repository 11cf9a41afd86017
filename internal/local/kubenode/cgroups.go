package kubenode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupTree is the cgroup named Name at the root of every mounted cgroup
// hierarchy (the v1 ones and, on a hybrid host, the unified one): the whole
// node lives in it, so that it can be found, killed and removed as one.
type cgroupTree struct {
	Name  string
	roots []string // the hierarchies' mount points
}

// newCgroupTree finds the mounted hierarchies.
func newCgroupTree(name string) (cgroupTree, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return cgroupTree{}, err
	}
	defer f.Close()
	var roots []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 3 && (fields[2] == "cgroup" || fields[2] == "cgroup2") {
			roots = append(roots, fields[1])
		}
	}
	if err := s.Err(); err != nil {
		return cgroupTree{}, err
	}
	if len(roots) == 0 {
		return cgroupTree{}, errors.New("kubenode: no cgroup hierarchy is mounted")
	}
	slices.Sort(roots)
	return cgroupTree{Name: name, roots: slices.Compact(roots)}, nil
}

// dirs are the tree's directories, one per hierarchy, with sub appended.
func (t cgroupTree) dirs(sub ...string) []string {
	out := make([]string, len(t.roots))
	for i, r := range t.roots {
		out[i] = filepath.Join(append([]string{r, t.Name}, sub...)...)
	}
	return out
}

// create makes the tree and its sub cgroup sub in every hierarchy. A v1
// cpuset cgroup starts with no CPUs and no memory nodes: it gets its
// parent's.
func (t cgroupTree) create(sub string) error {
	for _, root := range t.roots {
		for _, dir := range []string{filepath.Join(root, t.Name), filepath.Join(root, t.Name, sub)} {
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("kubenode: creating cgroup %s: %w", dir, err)
			}
			for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
				if err := inheritSetting(dir, file); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inheritSetting copies file from dir's parent when dir has it empty.
func inheritSetting(dir, file string) error {
	own, err := os.ReadFile(filepath.Join(dir, file))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && strings.TrimSpace(string(own)) != "") {
		return nil
	}
	if err != nil {
		return err
	}
	parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), file))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, file), parent, 0o644); err != nil {
		return fmt.Errorf("kubenode: setting %s of cgroup %s: %w", file, dir, err)
	}
	return nil
}

// procsFiles are the cgroup.procs files of sub in every hierarchy: a process
// that writes its PID to each joins the node.
func (t cgroupTree) procsFiles(sub string) []string {
	dirs := t.dirs(sub)
	for i := range dirs {
		dirs[i] = filepath.Join(dirs[i], "cgroup.procs")
	}
	return dirs
}

// pids are the processes anywhere in the tree.
func (t cgroupTree) pids() []int {
	seen := map[int]bool{}
	for _, dir := range t.dirs() {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// kill kills every process in the tree until none is left (a process may
// fork while the others are killed).
func (t cgroupTree) kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := t.pids()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kubenode: processes %v of cgroup %s do not die", pids, t.Name)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// remove removes the tree's cgroups, deepest first; they must be empty.
func (t cgroupTree) remove() error {
	var errs []error
	for _, dir := range t.dirs() {
		var all []string
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				all = append(all, path)
			}
			return nil
		})
		for i := len(all) - 1; i >= 0; i-- {
			if err := os.Remove(all[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("kubenode: removing cgroup %s: %w", all[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// exists says whether any hierarchy has the tree.
func (t cgroupTree) exists() bool {
	for _, dir := range t.dirs() {
		if _, err := os.Stat(dir); err == nil {
			return true
		}
	}
	return false
}
