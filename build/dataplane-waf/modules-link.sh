#!/bin/sh
# nginx.org's NGINX has its prefix at /etc/nginx, which a Gatewall data-plane
# pod mounts from an emptyDir: Gatewall's nginx.conf loads modules by their
# path under the prefix (modules/...), so link that path to the image's
# modules directory, then run the command given (the data-plane entrypoint).
# nginx-agent leaves the link alone: it is no file of a configuration.
set -eu
if [ ! -e /etc/nginx/modules ]; then
	ln -s /usr/lib/nginx/modules /etc/nginx/modules
fi
exec "$@"
