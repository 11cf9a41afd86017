#!/usr/bin/env bash
# Builds the Gateway API conformance echo server (echo-basic) that plays the
# conformance echo image in the local runtime:
#   hack/echo-basic.sh
# It lives in its own module (sigs.k8s.io/gateway-api/conformance), so a
# scratch module requires it and, explicitly, the gateway-api module at the
# same version; without the second requirement `go mod tidy` cannot resolve
# the conformance module's imports of the root module.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ECHO_VERSION="${ECHO_VERSION:-v1.6.3}"
dir="${GATEWALL_CACHE}/echo-basic-${ECHO_VERSION}"
reuse "${dir}" "echo-basic-${ECHO_VERSION}" echo-basic && exit 0

build() {
  local work="${GATEWALL_CACHE}/echo-basic-${ECHO_VERSION}-src"
  scratch_module "${work}" gatewall.local/echo-basic
  cat >>"${work}/go.mod" <<MOD
require (
	sigs.k8s.io/gateway-api ${ECHO_VERSION}
	sigs.k8s.io/gateway-api/conformance ${ECHO_VERSION}
)
MOD
  cat >"${work}/tools.go" <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/gateway-api/conformance/echo-basic"
GO
  (cd "${work}" && quiet go mod tidy &&
    mkdir -p "${dir}" &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${dir}/echo-basic.tmp" \
      sigs.k8s.io/gateway-api/conformance/echo-basic)
  mv "${dir}/echo-basic.tmp" "${dir}/echo-basic"
}
timed "echo-basic ${ECHO_VERSION}" build
link_tools "${dir}" echo-basic
