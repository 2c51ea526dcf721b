# Shared by the host tests (sourced; not run by tests/run.sh: not executable).
# shellcheck shell=bash

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"

# free_port PORT: the first TCP port from PORT up that nothing listens on.
free_port() {
	local port=$1
	while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
	echo "$port"
}

# wait_console LOG REGEX SECS QEMU_PID: print the first console line matching
# REGEX (carriage returns stripped) once it appears; empty if SECS pass or
# QEMU exits first.
wait_console() {
	local log=$1 re=$2 secs=$3 qpid=$4 line= i
	for ((i = 0; i < secs * 2; i++)); do
		[ -f "$log" ] && line=$(tr -d '\r' < "$log" | grep -m1 -E "$re")
		[ -n "$line" ] && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.5
	done
	echo "$line"
}
