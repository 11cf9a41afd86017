#!/usr/bin/env bash
# Installs a Go tool at a pinned version into the cache and links it into bin/:
#   hack/go-tool.sh NAME PACKAGE VERSION
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

name="$1" pkg="$2" version="$3"
dir="${GATEWALL_CACHE}/${name}-${version}"
reuse "${dir}" "${name}-${version}" "${name}" && exit 0

build() {
  mkdir -p "${dir}"
  GOBIN="${dir}" go install -trimpath "${pkg}@${version}"
}
timed "${name} ${version}" build
link_tools "${dir}" "${name}"
