#!/usr/bin/env bash
# Builds Helm v3 from the Go module proxy, as Helm's own Makefile does: the
# chart's tests render charts/gatewall with `helm template`, and `make
# run-local INSTALL=helm` installs Gatewall with it. Helm's version and the
# Kubernetes version it renders for when there is no cluster
# (.Capabilities.KubeVersion, checked against the chart's kubeVersion) are
# set at link time; without them Helm says v3.22 and Kubernetes v1.20.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
dir="${GATEWALL_CACHE}/helm-${HELM_VERSION}"
reuse "${dir}" "helm-${HELM_VERSION}" helm && exit 0

build() {
  local work="${GATEWALL_CACHE}/helm-${HELM_VERSION}-src" pkg=helm.sh/helm/v3 minor
  scratch_module "${work}" gatewall.local/helm
  # Every step is chained: timed runs this as a command whose failure it
  # reports, where `set -e` does not stop a function.
  (cd "${work}" && quiet go get "${pkg}/cmd/helm@${HELM_VERSION}") &&
    # Helm's Makefile: Kubernetes 1.<minor> for client-go v0.<minor>.
    minor="$(cd "${work}" && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)" &&
    mkdir -p "${dir}" &&
    (cd "${work}" && CGO_ENABLED=0 go build -trimpath -o "${dir}/helm.tmp" -ldflags "-s -w \
      -X ${pkg}/internal/version.version=${HELM_VERSION} \
      -X ${pkg}/pkg/chartutil.k8sVersionMajor=1 -X ${pkg}/pkg/chartutil.k8sVersionMinor=${minor} \
      -X ${pkg}/pkg/lint/rules.k8sVersionMajor=1 -X ${pkg}/pkg/lint/rules.k8sVersionMinor=${minor}" \
      "${pkg}/cmd/helm") &&
    mv "${dir}/helm.tmp" "${dir}/helm"
}
timed "helm ${HELM_VERSION}" build
link_tools "${dir}" helm
