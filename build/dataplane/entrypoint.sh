#!/bin/sh
# Gatewall data-plane container: NGINX and nginx-agent side by side.
#
# 1. If /etc/nginx/nginx.conf does not exist (the directory is an emptyDir of
#    a new pod), write the bootstrap configuration there; also if it fails
#    `nginx -t` (an agent that died in the middle of a push can leave a set of
#    files that do not fit together), which would otherwise keep NGINX, and so
#    the agent that would repair it, from ever starting again.
# 2. Start NGINX in the foreground of a child process.
# 3. Start nginx-agent with this script's arguments; its configuration is
#    /etc/nginx-agent/nginx-agent.conf (a ConfigMap written by Gatewall).
# 4. Every 5 seconds, empty NGINX's error log file /var/log/nginx/error.log
#    once it is larger than 1 MiB. Gatewall's nginx.conf logs there, at level crit,
#    for nginx-agent, which watches the file after each reload (it does not
#    watch stderr); the file is in an emptyDir, and would otherwise grow for
#    the pod's life. NGINX opens it to append, so it writes on at the start;
#    the agent's watch follows a truncated file.
# 5. On SIGTERM/SIGINT, stop NGINX gracefully (SIGQUIT: finish open requests)
#    and the agent (SIGTERM); when either stops by itself, stop the other and
#    exit non-zero so that the kubelet restarts the container.
#
# The script stays as the parent instead of exec'ing the agent: as PID 1 the
# agent would not pass SIGTERM on, and NGINX would be killed, not drained.
#
# /etc/nginx is fixed: before each reload the agent runs `nginx -t` without -c.
# /var/log/nginx/error.log is nginx/config.AgentErrorLog.
#
# Environment (defaults are the image's paths; override for local runs):
#   GATEWALL_NGINX            NGINX binary         (/usr/sbin/nginx)
#   GATEWALL_NGINX_AGENT      nginx-agent binary   (/usr/bin/nginx-agent)
#   GATEWALL_NGINX_BOOTSTRAP  bootstrap nginx.conf (/usr/share/gatewall/nginx-bootstrap.conf)
set -eu

nginx_bin="${GATEWALL_NGINX:-/usr/sbin/nginx}"
agent_bin="${GATEWALL_NGINX_AGENT:-/usr/bin/nginx-agent}"
bootstrap="${GATEWALL_NGINX_BOOTSTRAP:-/usr/share/gatewall/nginx-bootstrap.conf}"
conf=/etc/nginx/nginx.conf
error_log=/var/log/nginx/error.log
error_log_max=1048576

log() { echo "gatewall-dataplane: $*" >&2; }

for bin in "$nginx_bin" "$agent_bin"; do
	if [ ! -x "$bin" ]; then
		log "$bin is not an executable file"
		exit 1
	fi
done

# Writable directories the configurations use (mounted emptyDirs).
for dir in /var/run/nginx /var/cache/nginx /var/log/nginx; do
	mkdir -p "$dir"
done
# Unix sockets a killed NGINX left in the pod's /var/run/nginx would make
# its successor's bind fail ("Address already in use").
rm -f /var/run/nginx/*.sock

bootstrap() {
	cp "$bootstrap" "$conf.tmp"
	chmod 0644 "$conf.tmp"
	mv "$conf.tmp" "$conf"
}
if [ ! -e "$conf" ]; then
	log "no $conf: starting with the bootstrap configuration $bootstrap"
	bootstrap
elif ! "$nginx_bin" -t -q -e stderr -c "$conf"; then
	log "$conf fails nginx -t: starting with the bootstrap configuration; Gatewall pushes the Gateway's again"
	bootstrap
fi

# running PID: the process exists and is not a zombie (an exited child not
# reaped yet still answers kill -0).
# It forks nothing (read is a shell builtin): the loop below runs it twice
# a second in every data-plane pod.
running() {
	{ read -r stat_line <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat_rest="${stat_line##*) }"
	[ "${stat_rest%% *}" != Z ]
}

requested=0
stop() {
	log "stopping: NGINX gracefully, and nginx-agent"
	kill -QUIT "$nginx_pid" 2>/dev/null || true
	kill -TERM "$agent_pid" 2>/dev/null || true
}
trap 'requested=1; stop' TERM INT

# -e stderr: NGINX's own start-up messages go to the container log.
# daemon off: NGINX stays this script's child so that it can be watched.
"$nginx_bin" -e stderr -c "$conf" -g 'daemon off;' &
nginx_pid=$!
"$agent_bin" "$@" &
agent_pid=$!
log "NGINX (pid $nginx_pid) and nginx-agent (pid $agent_pid) started"

# trim_error_log empties the error log when it is over error_log_max bytes.
trim_error_log() {
	size="$(wc -c 2>/dev/null <"$error_log")" || return 0
	if [ "$size" -gt "$error_log_max" ]; then
		: >"$error_log"
		log "emptied $error_log ($size bytes; NGINX's messages are in the container log)"
	fi
}

# The error log's size (wc, a process) is looked at every 5 s; a crit-level
# log takes far longer to grow by 1 MiB.
ticks=0
while running "$nginx_pid" && running "$agent_pid"; do
	ticks=$((ticks + 1))
	if [ "$ticks" -ge 5 ]; then
		ticks=0
		trim_error_log
	fi
	sleep 1 &
	wait $! 2>/dev/null || true # a trapped signal ends the wait early
done

if [ "$requested" -eq 0 ]; then
	if running "$nginx_pid"; then
		log "nginx-agent exited; stopping NGINX"
	else
		log "NGINX exited; stopping nginx-agent"
	fi
	stop
fi

nginx_status=0
wait "$nginx_pid" 2>/dev/null || nginx_status=$?
agent_status=0
wait "$agent_pid" 2>/dev/null || agent_status=$?
log "NGINX exited with $nginx_status, nginx-agent with $agent_status"

if [ "$requested" -eq 1 ]; then
	exit 0
fi
exit 1
