#!/usr/bin/env bash
# Installs, from Debian's packages, what the local runtime's real node and
# `make images` need when missing: containerd, runc and the CNI plugins (the
# container runtime the kubelet drives), iptables and conntrack (kube-proxy),
# iproute2 (tc: the fault tests throttle a pod's link),
# and mmdebstrap, buildah and skopeo (images built without a registry).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages=(containerd runc containernetworking-plugins iptables conntrack iproute2 mmdebstrap buildah skopeo)
commands=(containerd ctr containerd-shim-runc-v2 runc iptables conntrack tc mmdebstrap buildah skopeo)

installed() {
  local c
  for c in "${commands[@]}"; do command -v "${c}" >/dev/null || return 1; done
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/portmap ]
}
installed && exit 0
# Two concurrent apt-get runs fail on dpkg's lock: take ours, then look again.
lock apt
installed && exit 0
install() { apt_install "${packages[@]}"; }
timed "node packages (apt): ${packages[*]}" install
