package node

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// containerMounts lists a container's bind mounts: its volumeMounts, the
// pod's files (/etc/hosts, /etc/resolv.conf: target to source) and the
// directory that carries the container ID. They are ordered parents first so
// that nested mount paths land inside their parent volume.
func containerMounts(c *corev1.Container, volPaths map[string]string, env map[string]string, podFiles map[string]string, idDir string) ([]bindMount, error) {
	var mounts []bindMount
	for _, vm := range c.VolumeMounts {
		src, ok := volPaths[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s refers to no volume", vm.Name)
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expand(vm.SubPathExpr, env)
		}
		if sub != "" {
			if filepath.IsAbs(sub) || strings.HasPrefix(filepath.Clean(sub), "..") {
				return nil, fmt.Errorf("volumeMount %s: invalid subPath %q", vm.Name, sub)
			}
			src = filepath.Join(src, sub)
			if _, err := os.Stat(src); os.IsNotExist(err) {
				// The kubelet creates a missing subPath as a directory.
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, fmt.Errorf("volumeMount %s: creating subPath: %w", vm.Name, err)
				}
			}
		}
		mounts = append(mounts, bindMount{source: src, target: filepath.Clean(vm.MountPath), readOnly: vm.ReadOnly})
	}
	targets := make([]string, 0, len(podFiles))
	for t := range podFiles {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		mounts = append(mounts, bindMount{source: podFiles[t], target: t})
	}
	// nginx-agent (and others) find their container ID in
	// /proc/self/mountinfo as a path ending in 64 hex characters.
	mounts = append(mounts, bindMount{source: idDir, target: idDir, readOnly: true})
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].target) < depth(mounts[j].target) })
	return mounts, nil
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// ensureMountPoints makes every mount target exist, as a directory or a
// file like its source. A target inside an earlier mount is created in that
// mount's source (what the container will see there); other missing targets
// are created on the host and returned, since the container sees the host's
// file system around its mounts.
func ensureMountPoints(mounts []bindMount) (createdOnHost []string, err error) {
	for i, m := range mounts {
		srcInfo, err := os.Stat(m.source)
		if err != nil {
			return createdOnHost, fmt.Errorf("mount source %s: %w", m.source, err)
		}
		where := m.target
		onHost := true
		for j := i - 1; j >= 0; j-- {
			if rel, ok := within(mounts[j].target, m.target); ok {
				where = filepath.Join(mounts[j].source, rel)
				onHost = false
				break
			}
		}
		if _, err := os.Stat(where); err == nil {
			continue
		}
		if srcInfo.IsDir() {
			err = os.MkdirAll(where, 0o755)
		} else {
			if err = os.MkdirAll(filepath.Dir(where), 0o755); err == nil {
				var f *os.File
				if f, err = os.OpenFile(where, os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
					err = f.Close()
				}
			}
		}
		if err != nil {
			return createdOnHost, fmt.Errorf("creating mount point %s: %w", m.target, err)
		}
		if onHost {
			createdOnHost = append(createdOnHost, where)
		}
	}
	return createdOnHost, nil
}

// within reports whether p is strictly inside dir, and the relative path.
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return rel, true
}

// resolvConf is every pod's /etc/resolv.conf. The local node has no cluster
// DNS: names a pod may use are in its /etc/hosts, and other lookups must fail
// at once, as an NXDOMAIN from cluster DNS would, not time out on a server
// the pod cannot reach (gRPC clients look up service-config TXT records
// before they connect). Nothing listens on the pod's own loopback port 53,
// so queries are refused immediately.
const resolvConf = "# gatewall local node: no cluster DNS; names come from /etc/hosts\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n"

// hostsFile renders the pod's /etc/hosts as the kubelet does, plus the
// node's extra entries.
func hostsFile(pod *corev1.Pod, podIP string, extra []string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (gatewall local node).\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	name := podHostname(pod)
	if pod.Spec.Subdomain != "" {
		fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.cluster.local\t%s\n", podIP, name, pod.Spec.Subdomain, pod.Namespace, name)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", podIP, name)
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	if len(extra) > 0 {
		b.WriteString("\n# Entries added by the local node.\n")
		for _, e := range extra {
			b.WriteString(e + "\n")
		}
	}
	return []byte(b.String())
}
