#!/usr/bin/env bash
# Builds the App Protect TEST DOUBLE module (test/apstub) against Debian's
# NGINX build tree (nginx-dev), with NGINX's exact configure flags, into
# bin/ngx_http_app_protect_module.so. F5's real module cannot be obtained
# here; this one exists only so tests can load WAF configurations.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

src="${GATEWALL_ROOT}/test/apstub"
sum="$(cat "${src}/config" "${src}"/*.c | sha256sum | cut -c1-12)"
ver="$(nginx -v 2>&1 | sed 's#.*/##')"
dir="${GATEWALL_CACHE}/apstub-${ver}-${sum}"
reuse "${dir}" "apstub-${ver}-${sum}" ngx_http_app_protect_module.so && exit 0
[ -d /usr/share/nginx/src ] || { log "nginx-dev is missing: run hack/nginx.sh"; exit 1; }

build() {
  local work
  work="$(mktemp -d)"
  cp -r /usr/share/nginx/src "${work}/nginx"
  (
    cd "${work}/nginx"
    . ./conf_flags
    ./configure "${NGX_CONF_FLAGS[@]}" --add-dynamic-module="${src}" >"${work}/configure.log" 2>&1 ||
      { tail -20 "${work}/configure.log"; exit 1; }
    make -f objs/Makefile modules >"${work}/make.log" 2>&1 || { tail -30 "${work}/make.log"; exit 1; }
  )
  mkdir -p "${dir}"
  cp "${work}/nginx/objs/ngx_http_app_protect_module.so" "${dir}/"
  rm -rf "${work}"
}
timed "App Protect test double module (NGINX ${ver})" build
link_tools "${dir}" ngx_http_app_protect_module.so
