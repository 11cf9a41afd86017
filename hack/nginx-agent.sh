#!/usr/bin/env bash
# Builds nginx-agent v3 from the Go module proxy. `go install` is refused (the
# version list is filtered), so a scratch module reuses the agent's own go.sum
# and replaces one refused OpenTelemetry module version with a neighbour.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AGENT_VERSION="${AGENT_VERSION:-v3.11.2}"
dir="${GATEWALL_CACHE}/nginx-agent-${AGENT_VERSION}"
reuse "${dir}" "nginx-agent-${AGENT_VERSION}" nginx-agent && exit 0

build() {
  local work="${GATEWALL_CACHE}/nginx-agent-${AGENT_VERSION}-src"
  scratch_module "${work}" gatewall.local/nginx-agent
  local moddir
  moddir="$(go mod download -json "github.com/nginx/agent/v3@${AGENT_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  cp "${moddir}/go.sum" "${work}/go.sum"
  chmod u+w "${work}/go.sum"
  cat >>"${work}/go.mod" <<MOD
replace go.opentelemetry.io/collector/confmap/provider/httpsprovider => go.opentelemetry.io/collector/confmap/provider/httpsprovider v1.51.0
MOD
  (cd "${work}" && quiet go get "github.com/nginx/agent/v3/cmd/agent@${AGENT_VERSION}" &&
    mkdir -p "${dir}" &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${AGENT_VERSION}" \
      -o "${dir}/nginx-agent.tmp" github.com/nginx/agent/v3/cmd/agent)
  mv "${dir}/nginx-agent.tmp" "${dir}/nginx-agent"
}
timed "nginx-agent ${AGENT_VERSION}" build
link_tools "${dir}" nginx-agent
