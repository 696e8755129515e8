#!/bin/sh
# crashloop.sh CMD [ARG...]: a supervisor like a Kasm image's custom_startup.sh.
# Runs CMD; whenever it is gone, waits a second and runs it again, forever.
# On SIGTERM/SIGINT/SIGHUP it kills the current child and exits.
if [ $# -eq 0 ]; then
	echo "usage: crashloop.sh CMD [ARG...]" >&2
	exit 2
fi

child=
stop() {
	trap - TERM INT HUP
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	exit 0
}
trap stop TERM INT HUP

while :; do
	# A non-interactive shell starts background jobs with SIGINT/SIGQUIT ignored;
	# give the app the defaults it would have in the foreground.
	env --default-signal=INT,QUIT -- "$@" &
	child=$!
	# wait returns early when a trapped signal arrives; stop() then runs.
	wait "$child"
	child=
	sleep 1 &
	wait $!
done
