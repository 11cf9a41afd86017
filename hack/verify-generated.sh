#!/usr/bin/env bash
# Fails when the generated files (deepcopy code, CRDs, RBAC, and their copies
# in the Helm chart) are not what the generators make of the current sources:
#   CONTROLLER_GEN=bin/controller-gen hack/verify-generated.sh
# It regenerates them from nothing in a scratch copy of the tree (the copy's
# generated files are deleted first, so a file the generators no longer
# produce is caught too) and compares. The working tree is never modified and
# git is not used: an uncommitted edit fails the check only if it changes the
# generated output, and outside a git checkout the check works the same.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONTROLLER_GEN="${CONTROLLER_GEN:-${GATEWALL_BIN}/controller-gen}"
[ -x "${CONTROLLER_GEN}" ] || { log "controller-gen not found at ${CONTROLLER_GEN}: run make tools"; exit 1; }

# generated DIR lists, relative to DIR, the files the generators write.
generated() {
  (
    cd "$1"
    find api -name 'zz_generated.*.go'
    find config/crd/bases config/plm/crd -name '*.yaml'
    [ ! -e config/rbac/role.yaml ] || echo config/rbac/role.yaml
    # make manifests copies the CRDs and config/rbac's rules and admission
    # policies into the chart: a copy edited by hand, or left behind by a
    # change of config/, is stale too.
    find charts/gatewall/crds charts/gatewall/files -name '*.yaml' 2>/dev/null || true
  ) | LC_ALL=C sort
}

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
tar -C "${GATEWALL_ROOT}" --exclude=./bin --exclude=./.git --exclude=./.local -cf - . | tar -C "${work}" -xf -
generated "${work}" | (cd "${work}" && xargs -r rm -f)

# The Makefile's own recipes, run in the copy; deepcopy first, since the CRD
# and RBAC generators load packages that need it. -o: never rebuild the tool.
regen() {
  local target
  for target in generate manifests; do
    env -u MAKEFLAGS -u MFLAGS make -s -C "${work}" -o "${CONTROLLER_GEN}" \
      CONTROLLER_GEN="${CONTROLLER_GEN}" "${target}"
  done
}
quiet regen

stale=()
while read -r f; do
  if [ ! -e "${GATEWALL_ROOT}/${f}" ]; then
    stale+=("${f} (missing)")
  elif [ ! -e "${work}/${f}" ]; then
    stale+=("${f} (no generator produces it)")
  elif ! cmp -s "${GATEWALL_ROOT}/${f}" "${work}/${f}"; then
    stale+=("${f} (differs)")
    diff -u --label "${f} (committed)" --label "${f} (regenerated)" \
      "${GATEWALL_ROOT}/${f}" "${work}/${f}" | head -n 40 >&2 || true
  fi
done < <({ generated "${GATEWALL_ROOT}"; generated "${work}"; } | LC_ALL=C sort -u)

if [ "${#stale[@]}" -gt 0 ]; then
  log "generated files are stale; run 'make manifests generate' (and delete what no generator produces):"
  printf '  %s\n' "${stale[@]}" >&2
  exit 1
fi
log "generated files are current"
