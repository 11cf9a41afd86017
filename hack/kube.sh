#!/usr/bin/env bash
# Builds Kubernetes binaries from the Go module proxy:
#   hack/kube.sh kube-apiserver [kube-controller-manager kube-scheduler kubelet kube-proxy kubectl]
# `go install k8s.io/kubernetes/cmd/...` is refused (replace directives), so a
# scratch module requires k8s.io/kubernetes and replaces each staging module
# with its published version. The k8s.io/kubernetes v1.37.2 zip is refused by
# the proxy, so v1.37.1 is used.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBE_VERSION="${KUBE_VERSION:-v1.37.1}"
STAGING_VERSION="v0${KUBE_VERSION#v1}"
tools=("$@")
[ "${#tools[@]}" -gt 0 ] || tools=(kube-apiserver)

dir="${GATEWALL_CACHE}/kube-${KUBE_VERSION}"
# One lock for every Kubernetes binary of a version: they share the scratch module.
reuse "${dir}" "kube-${KUBE_VERSION}" "${tools[@]}" && exit 0

work="${GATEWALL_CACHE}/kube-${KUBE_VERSION}-src"
build() {
  if [ ! -f "${work}/.ready" ]; then
    scratch_module "${work}" gatewall.local/kube
    local gomod
    gomod="$(go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    {
      echo "require k8s.io/kubernetes ${KUBE_VERSION}"
      echo "replace ("
      # The staging modules are the ones k8s.io/kubernetes replaces with ./staging paths.
      sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "${gomod}" | sort -u |
        while read -r m; do echo "  ${m} => ${m} ${STAGING_VERSION}"; done
      echo ")"
    } >>"${work}/go.mod"
    touch "${work}/.ready"
  fi
  # Each command's dependencies enter go.sum once (`go get`); .commands lists
  # those done, so adding a tool to an existing scratch module gets only its own.
  local t
  for t in "${tools[@]}"; do
    grep -qx "${t}" "${work}/.commands" 2>/dev/null && continue
    (cd "${work}" && quiet go get "k8s.io/kubernetes/cmd/${t}@${KUBE_VERSION}")
    echo "${t}" >>"${work}/.commands"
  done
  local minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  local ld=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    ld+=" -X ${pkg}.gitTreeState=clean"
  done
  mkdir -p "${dir}"
  for t in "${tools[@]}"; do
    [ -x "${dir}/${t}" ] && continue
    (cd "${work}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w${ld}" \
      -o "${dir}/${t}.tmp" "k8s.io/kubernetes/cmd/${t}")
    mv "${dir}/${t}.tmp" "${dir}/${t}"
  done
}
timed "${tools[*]} ${KUBE_VERSION}" build
link_tools "${dir}" "${tools[@]}"
