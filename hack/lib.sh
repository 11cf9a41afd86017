#!/usr/bin/env bash
# Shared helpers for the toolchain scripts in hack/.
#
# Every tool is built once per version into a cache outside the clone
# (${GATEWALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatewall}/<tool>-<version>/)
# and bin/<tool> is a symlink into it, so a fresh clone on a machine that
# built it before takes seconds. A build holds a lock per tool (and version),
# so concurrent runs (make -j, two clones sharing the cache) build it once.
set -euo pipefail

GATEWALL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GATEWALL_BIN="${GATEWALL_ROOT}/bin"

# HOME can be unset (env -i, some CI runners and init systems); the cache and
# Go's own caches (GOCACHE, GOPATH) derive from it. Use the user's home from
# the password database, else a directory under bin/ (ignored by git).
if [ -z "${HOME:-}" ]; then
  HOME="$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)"
  if [ -z "${HOME}" ] || [ ! -d "${HOME}" ] || [ ! -w "${HOME}" ]; then
    HOME="${GATEWALL_BIN}/.home"
  fi
  export HOME
  mkdir -p "${HOME}"
fi

GATEWALL_CACHE="${GATEWALL_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/gatewall}"
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
mkdir -p "${GATEWALL_BIN}" "${GATEWALL_CACHE}"

log() { printf '[hack] %s\n' "$*" >&2; }

# link_tools DIR NAME... points bin/NAME at DIR/NAME for each NAME. The link
# is replaced atomically, so a test reading bin/ concurrently never finds it
# missing.
link_tools() {
  local dir="$1"; shift
  local name link
  for name in "$@"; do
    link="${GATEWALL_BIN}/${name}"
    [ "$(readlink "${link}" 2>/dev/null)" = "${dir}/${name}" ] && continue
    ln -sfn "${dir}/${name}" "${link}.tmp.$$"
    mv -Tf "${link}.tmp.$$" "${link}"
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

# lock NAME takes an exclusive lock named NAME, held until the script exits.
# Without flock(1) (util-linux) it logs that it runs unlocked.
lock() {
  local file="${GATEWALL_CACHE}/locks/$1.lock"
  mkdir -p "${GATEWALL_CACHE}/locks"
  command -v flock >/dev/null || { log "flock not found: building $1 without a lock"; return 0; }
  exec {GATEWALL_LOCK_FD}>"${file}"
  if ! flock -n "${GATEWALL_LOCK_FD}"; then
    log "waiting for another build of $1 to finish"
    flock "${GATEWALL_LOCK_FD}"
  fi
}

# reuse DIR LOCK NAME... links the cached tools NAME... from DIR into bin/ and
# succeeds when DIR has them all. Otherwise it takes the lock LOCK, looks
# again (another run may have just built them), and fails only when the
# caller must build them, still holding the lock:
#   reuse "${dir}" "etcd-${ETCD_VERSION}" etcd && exit 0
reuse() {
  local dir="$1" name="$2"; shift 2
  if cached "${dir}" "$@"; then link_tools "${dir}" "$@"; return 0; fi
  lock "${name}"
  if cached "${dir}" "$@"; then link_tools "${dir}" "$@"; return 0; fi
  return 1
}

# quiet CMD... runs CMD with its output in a log that is shown only when it
# fails, so successful builds stay quiet and failures say why.
quiet() {
  local out rc=0
  out="$(mktemp)"
  "$@" >"${out}" 2>&1 || rc=$?
  if [ "${rc}" -ne 0 ]; then
    log "failed (exit ${rc}): $*"
    tail -n 40 "${out}" >&2
  fi
  rm -f "${out}"
  return "${rc}"
}

# timed LABEL CMD... runs CMD, printing what it builds and how long it took,
# with a heartbeat so a cold build does not look like a hang.
timed() {
  local label="$1"; shift
  local start=$SECONDS
  log "building ${label} (this can take minutes on a cold machine)"
  # The heartbeat kills its own sleep when stopped: an orphaned sleep would
  # hold stderr open and delay whoever reads it through a pipe. It kills
  # every job it has, not $!: a TERM that comes while `sleep 30 &` is being
  # started runs the trap before $! is read.
  (
    trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
    while :; do
      sleep 30 &
      wait "$!"
      log "  ... still building ${label} ($((SECONDS - start))s)"
    done
  ) &
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

# scratch_module DIR MODULE creates an empty Go module in DIR. Callers hold
# the lock of the tool DIR belongs to.
scratch_module() {
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && quiet go mod init "$2")
}

# apt_install PACKAGE... installs Debian packages with apt-get (as root, else
# with sudo) and stops the services they start: tests run their own. Callers
# hold a lock (two concurrent apt-get runs fail on dpkg's lock).
apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  ${sudo} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  local s
  for s in nginx containerd; do
    ${sudo} service "${s}" stop >/dev/null 2>&1 || true
  done
}
