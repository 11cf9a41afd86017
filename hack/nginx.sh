#!/usr/bin/env bash
# Installs Debian's NGINX with the stream and njs modules (the data plane's
# h1/h2c sniffer), and nginx-dev, whose build tree builds test modules, when
# missing. The data plane in tests is this real NGINX.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

installed() {
  command -v nginx >/dev/null && [ -d /usr/share/nginx/src ] &&
    [ -f /usr/lib/nginx/modules/ngx_stream_js_module.so ]
}
installed && exit 0
# Two concurrent apt-get runs fail on dpkg's lock: take ours, then look again.
lock nginx-apt
installed && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
install() {
  ${sudo} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq --no-install-recommends \
    nginx nginx-dev libnginx-mod-stream libnginx-mod-stream-js >/dev/null
  # Debian starts the packaged service; tests run their own NGINX processes.
  ${sudo} service nginx stop >/dev/null 2>&1 || true
}
timed "nginx (apt)" install
nginx -v
