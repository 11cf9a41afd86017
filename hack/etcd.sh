#!/usr/bin/env bash
# Builds etcd (for envtest and the local runtime) from the Go module proxy.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
dir="${GATEWALL_CACHE}/etcd-${ETCD_VERSION}"
reuse "${dir}" "etcd-${ETCD_VERSION}" etcd && exit 0

build() {
  local work="${GATEWALL_CACHE}/etcd-${ETCD_VERSION}-src"
  scratch_module "${work}" gatewall.local/etcd
  (cd "${work}" && quiet go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" &&
    mkdir -p "${dir}" &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${dir}/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "${dir}/etcd.tmp" "${dir}/etcd"
}
timed "etcd ${ETCD_VERSION}" build
link_tools "${dir}" etcd
