#!/usr/bin/env bash
# Builds the local node's pause program (build/local/pause/pause.c), static,
# for the pod sandbox image: hack/pause.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

src="${GATEWALL_ROOT}/build/local/pause/pause.c"
sum="$(sha256sum "${src}" | cut -c1-12)"
dir="${GATEWALL_CACHE}/pause-${sum}"
reuse "${dir}" "pause-${sum}" pause && exit 0
command -v gcc >/dev/null || { log "gcc is missing (apt-get install gcc libc6-dev)"; exit 1; }

build() {
  mkdir -p "${dir}"
  gcc -static -O2 -Wall -Wextra -Werror -o "${dir}/pause.tmp" "${src}"
  strip "${dir}/pause.tmp"
  mv "${dir}/pause.tmp" "${dir}/pause"
}
timed "pause (static)" build
link_tools "${dir}" pause
