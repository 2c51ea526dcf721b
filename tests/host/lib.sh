# Shared by the host tests (sourced; not run by tests/run.sh: not executable).
# shellcheck shell=bash

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"

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
