#!/usr/bin/env bash
# Makes the Debian base image that `make images` builds FROM when no registry
# is reachable: a minimal Debian ${DEBIAN_RELEASE} root file system made by
# mmdebstrap from Debian's package mirrors (with the security and updates
# suites, so that packages installed on it match the host's), committed to
# buildah's local storage as ${BASE_IMAGE}:
#   hack/base-image.sh
# The root file system is cached as a tarball outside the clone; bump
# BASE_REVISION to make a new one (it is a snapshot of the mirrors).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEBIAN_RELEASE="${DEBIAN_RELEASE:-bookworm}"
BASE_REVISION="${BASE_REVISION:-1}"
BASE_IMAGE="${BASE_IMAGE:-localhost/gatewall/debian:${DEBIAN_RELEASE}}"
dir="${GATEWALL_CACHE}/debian-${DEBIAN_RELEASE}-${BASE_REVISION}"

for tool in mmdebstrap buildah; do
  command -v "${tool}" >/dev/null || { log "${tool} is missing: run hack/node-packages.sh"; exit 1; }
done

# The image is in buildah's storage with the label of this tarball.
committed() {
  [ "$(buildah inspect --type image --format '{{index .ImageAnnotations "io.gatewall.base"}}' "${BASE_IMAGE}" 2>/dev/null)" = \
    "debian-${DEBIAN_RELEASE}-${BASE_REVISION}" ]
}
[ -f "${dir}/rootfs.tar" ] && committed && exit 0
lock "debian-${DEBIAN_RELEASE}-${BASE_REVISION}"

rootfs() {
  mkdir -p "${dir}"
  # minbase: essential packages and apt; ca-certificates for TLS clients.
  # Documentation and locales are left out of every package.
  quiet mmdebstrap --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --aptopt='Acquire::Retries "3"' \
    "${DEBIAN_RELEASE}" "${dir}/rootfs.tmp.tar" \
    "deb http://deb.debian.org/debian ${DEBIAN_RELEASE} main" \
    "deb http://deb.debian.org/debian ${DEBIAN_RELEASE}-updates main" \
    "deb http://deb.debian.org/debian-security ${DEBIAN_RELEASE}-security main"
  mv "${dir}/rootfs.tmp.tar" "${dir}/rootfs.tar"
}
[ -f "${dir}/rootfs.tar" ] || timed "Debian ${DEBIAN_RELEASE} base file system (mmdebstrap)" rootfs

commit() {
  local ctr
  ctr="$(buildah from scratch)"
  buildah add --quiet "${ctr}" "${dir}/rootfs.tar" / >/dev/null
  buildah config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --annotation "io.gatewall.base=debian-${DEBIAN_RELEASE}-${BASE_REVISION}" "${ctr}"
  buildah commit --quiet --rm "${ctr}" "${BASE_IMAGE}" >/dev/null
}
timed "base image ${BASE_IMAGE}" commit
