#!/usr/bin/env bash
# Builds CoreDNS from the Go module proxy: the local runtime's cluster DNS
# (pods find Services by name, as on any cluster), and the image the Gateway
# API conformance suite's base manifests run.
#   hack/coredns.sh
# A scratch module's main links the CoreDNS server with only the plugins a
# cluster DNS and the conformance manifests use (CoreDNS's own build links
# every plugin, with the cloud providers' SDKs).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
dir="${GATEWALL_CACHE}/coredns-${COREDNS_VERSION}"
reuse "${dir}" "coredns-${COREDNS_VERSION}" coredns && exit 0

build() {
  local work="${GATEWALL_CACHE}/coredns-${COREDNS_VERSION}-src"
  scratch_module "${work}" gatewall.local/coredns
  echo "require github.com/coredns/coredns ${COREDNS_VERSION}" >>"${work}/go.mod"
  cat >"${work}/main.go" <<'GO'
// Command coredns is CoreDNS with the plugins of a cluster DNS.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func main() { coremain.Run() }
GO
  (cd "${work}" && quiet go mod tidy &&
    mkdir -p "${dir}" &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${dir}/coredns.tmp" .)
  mv "${dir}/coredns.tmp" "${dir}/coredns"
}
timed "coredns ${COREDNS_VERSION}" build
link_tools "${dir}" coredns
