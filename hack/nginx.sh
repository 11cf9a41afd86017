#!/usr/bin/env bash
# Installs Debian's NGINX with the stream and njs modules (the data plane's
# h1/h2c sniffer), the Lua module with lua-resty-core and lua-cjson (the data
# plane's balancer of dynamic endpoints), and nginx-dev, whose build tree
# builds test modules, when missing. The data plane in tests is this real NGINX.
# openssl, the command, is the data plane's OpenSSL 3.0 speaking: the tests of
# listener tls.options read its ciphers and connect with it (s_client).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

installed() {
  command -v nginx >/dev/null && command -v openssl >/dev/null && [ -d /usr/share/nginx/src ] &&
    [ -f /usr/lib/nginx/modules/ngx_stream_js_module.so ] &&
    [ -f /usr/lib/nginx/modules/ngx_http_lua_module.so ] && [ -f /usr/share/lua/5.1/ngx/balancer.lua ] &&
    [ -d /usr/share/doc/lua-cjson ]
}
installed && exit 0
# Two concurrent apt-get runs fail on dpkg's lock: take ours, then look again.
lock apt
installed && exit 0
install() {
  apt_install nginx nginx-dev libnginx-mod-stream libnginx-mod-stream-js \
    libnginx-mod-http-lua lua-resty-core lua-resty-lrucache lua-cjson openssl
}
timed "nginx (apt)" install
nginx -v
