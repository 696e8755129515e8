#!/bin/sh
# relaunch-once.sh [-f "EXTRA ARGS"] CMD [ARG...]: a launcher like LibreOffice's
# oosplash, which restarts soffice.bin once when it has made a new profile.
# Starts CMD ARG... EXTRA ARGS as its child (the first instance: EXTRA ARGS make
# it end after a moment, e.g. "--exit-after 1000"); when that one has ended,
# however it ended, starts CMD ARG... once more (the second instance, which
# stays) and exits with its status. Both instances are children of this shell.
# On SIGTERM/SIGINT/SIGHUP it kills the current child and exits.
first=
if [ "$1" = "-f" ]; then
	first=$2
	shift 2
fi
if [ $# -eq 0 ]; then
	echo "usage: relaunch-once.sh [-f \"EXTRA ARGS\"] CMD [ARG...]" >&2
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

# A non-interactive shell starts background jobs with SIGINT/SIGQUIT ignored;
# give the app the defaults it would have in the foreground. $first is split
# into words on purpose.
# shellcheck disable=SC2086
env --default-signal=INT,QUIT -- "$@" $first &
child=$!
wait "$child"
echo "relaunch-once.sh: the first instance (pid $child) ended with status $?; starting it again"
env --default-signal=INT,QUIT -- "$@" &
child=$!
wait "$child"
status=$?
child=
exit $status
