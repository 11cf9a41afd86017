#!/usr/bin/env bash
# Puts the binaries the Dockerfiles copy into bin/<os>/<arch>/ (real files:
# a build context cannot follow bin/'s links into the tool cache):
#   hack/image-binaries.sh [NAME...]   (default: every one)
# gatewall (the manager), gatewall-endpoints (the data plane's endpoints
# client) and testbackend are built from this repository,
# static; the others are the tools hack/ built, copied.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOOS="${GOOS:-linux}" GOARCH="${GOARCH:-amd64}"
out="${GATEWALL_BIN}/${GOOS}/${GOARCH}"
names=("$@")
[ "${#names[@]}" -gt 0 ] || names=(gatewall gatewall-endpoints testbackend nginx-agent echo-basic coredns pause ngx_http_app_protect_module.so)
mkdir -p "${out}"

gobuild() {
  (cd "${GATEWALL_ROOT}" && CGO_ENABLED=0 GOOS="${GOOS}" GOARCH="${GOARCH}" \
    go build -trimpath -ldflags "-s -w" -o "${out}/$1.tmp" "$2")
  mv "${out}/$1.tmp" "${out}/$1"
}

for name in "${names[@]}"; do
  log "image binary ${name}"
  case "${name}" in
    gatewall) gobuild gatewall ./cmd ;;
    gatewall-endpoints) gobuild gatewall-endpoints ./cmd/gatewall-endpoints ;;
    testbackend) gobuild testbackend ./test/e2e/testbackend ;;
    *)
      [ -e "${GATEWALL_BIN}/${name}" ] || { log "bin/${name} is missing: run make tools"; exit 1; }
      # Copy only when changed, so that image layers stay cached.
      cmp -s "${GATEWALL_BIN}/${name}" "${out}/${name}" || cp -L "${GATEWALL_BIN}/${name}" "${out}/${name}"
      ;;
  esac
done
