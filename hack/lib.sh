#!/usr/bin/env bash
# Shared helpers for the toolchain scripts in hack/.
#
# Every tool is built once per version into a cache outside the clone
# (${XDG_CACHE_HOME:-$HOME/.cache}/gatewall/<tool>-<version>/) and linked into
# bin/ so a fresh clone on a machine that built it before takes seconds.
set -euo pipefail

GATEWALL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GATEWALL_BIN="${GATEWALL_ROOT}/bin"
GATEWALL_CACHE="${GATEWALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatewall}"
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
mkdir -p "${GATEWALL_BIN}" "${GATEWALL_CACHE}"

log() { printf '[hack] %s\n' "$*" >&2; }

# link_tools DIR NAME... links DIR/NAME into bin/NAME for each NAME.
link_tools() {
  local dir="$1"; shift
  local name
  for name in "$@"; do
    ln -sfn "${dir}/${name}" "${GATEWALL_BIN}/${name}"
  done
}

# cached DIR NAME... succeeds when every NAME exists and is executable in DIR.
cached() {
  local dir="$1"; shift
  local name
  for name in "$@"; do
    [ -x "${dir}/${name}" ] || return 1
  done
}

# timed LABEL CMD... runs CMD, printing what it builds and how long it took,
# with a heartbeat so a cold build does not look like a hang.
timed() {
  local label="$1"; shift
  local start=$SECONDS
  log "building ${label} (this can take minutes on a cold machine)"
  ( while sleep 30; do log "  ... still building ${label} ($((SECONDS - start))s)"; done ) &
  local beat=$!
  local rc=0
  "$@" || rc=$?
  kill "${beat}" 2>/dev/null || true
  wait "${beat}" 2>/dev/null || true
  if [ "${rc}" -ne 0 ]; then
    log "FAILED building ${label} after $((SECONDS - start))s"
    return "${rc}"
  fi
  log "built ${label} in $((SECONDS - start))s"
}

# scratch_module DIR MODULE creates an empty Go module in DIR.
scratch_module() {
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && go mod init "$2" >/dev/null 2>&1)
}
