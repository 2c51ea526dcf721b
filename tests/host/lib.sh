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

# complete_lines LOG: the console log's lines that QEMU has finished
# writing (carriage returns stripped): a line still being written is left
# out, so that a match never sees half of it.
complete_lines() {
	if [ -z "$(tail -c1 "$1")" ]; then
		tr -d '\r' < "$1"
	else
		tr -d '\r' < "$1" | sed '$d'
	fi
}

# wait_console LOG REGEX SECS QEMU_PID: print the first complete console
# line matching REGEX once it appears; empty if SECS pass or QEMU exits
# first.
wait_console() {
	local log=$1 re=$2 secs=$3 qpid=$4 line= i
	for ((i = 0; i < secs * 2; i++)); do
		[ -f "$log" ] && line=$(complete_lines "$log" | grep -m1 -E "$re")
		[ -n "$line" ] && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.5
	done
	echo "$line"
}

# The environment of every host test (tests/run.sh sets it): $art, the
# kernel artifact dir; $initrd, the initramfs; $out, the output dir (made,
# absolute; default build/test). Needs $top.
# shellcheck disable=SC2034
host_test_env() {
	art=${PFSCALE_ART:?PFSCALE_ART not set}
	initrd=${PFSCALE_INITRD:?PFSCALE_INITRD not set}
	out=${PFSCALE_OUT:-$top/build/test}
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
}
