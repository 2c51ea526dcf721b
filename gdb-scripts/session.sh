#!/bin/bash
# Boot a pfscale guest with QEMU's gdbstub in the background and run gdb on
# it with vmlinux, the kernel's vmlinux-gdb.py and gdb-scripts/pfscale.py
# loaded; the guest is stopped when gdb exits. Used by `make gdb`.
#
#   gdb-scripts/session.sh -k ARTDIR -i INITRD [-p PORT] [-r RUNLIST]
#       [-a CMDLINE] [-c CPUS] [-m MB] [-l LOG] [-- GDB ARGS...]
#
# ARTDIR holds bzImage, vmlinux and vmlinux-gdb.py (build/kernel-test.path).
# GDB ARGS are added to gdb's command line, e.g. -batch -ex "pf-counters"
# for a non-interactive run. The guest runs RUNLIST (default gdbmm,gdbmap:
# two helper processes with known mappings) and gdb attaches once the
# guest's userspace is up.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
art= initrd= port=1234 run=gdbmm,gdbmap append= cpus=4 mem=1024 log=
while getopts "k:i:p:r:a:c:m:l:" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; p) port=$OPTARG ;;
	r) run=$OPTARG ;; a) append=$OPTARG ;; c) cpus=$OPTARG ;;
	m) mem=$OPTARG ;; l) log=$OPTARG ;;
	*) sed -n '2,13s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
# shellcheck source=scripts/common.sh
. "$top/scripts/common.sh"
die() { echo "pfscale gdb: $*" >&2; exit 1; }
for f in bzImage vmlinux vmlinux-gdb.py; do
	[ -f "$art/$f" ] || die "no $f in '$art' (run: make kernel)"
done
[ -f "$initrd" ] || die "no initramfs '$initrd' (run: make initramfs)"
command -v gdb >/dev/null || die "no gdb (run: make deps)"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	die "port $port is in use (make gdb GDB_PORT=N)"
fi
[ -n "$log" ] || log=$top/build/gdb-console.log
mkdir -p "$(dirname "$log")"

qpid=
stop_guest() {
	[ -n "$qpid" ] || return
	stop_boot "$qpid"
	qpid=
}
trap stop_guest EXIT
trap 'stop_guest; exit 1' INT TERM

: >"$log"
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r "$run" \
	${append:+-a "$append"} -c "$cpus" -m "$mem" -g -p "$port" -l "$log" \
	-t 100000 >"$log.boot" 2>&1 &
qpid=$!
echo "pfscale gdb: guest booting (console $log, gdbstub :$port)" >&2
last=${run##*,}
for ((i = 0; i < 240; i++)); do
	tr -d '\r' <"$log" 2>/dev/null | grep -q "^# pfscale-guest: $last starting" &&
		break
	kill -0 "$qpid" 2>/dev/null || die "guest ended early: $(cat "$log.boot")"
	sleep 0.5
done
# Give the run scripts' helpers a moment to print what they mapped.
sleep 2
tr -d '\r' <"$log" | grep -E '^(GDBTHP|GDBMAP|GDBMM|RACE|GDBBIG) pid=' >&2
# gdb ignores SIGINT for itself; keep ^C from killing this script, too.
trap '' INT
gdb -nx -q "$art/vmlinux" \
	-iex "set auto-load python-scripts off" \
	-ex "source $art/vmlinux-gdb.py" \
	-ex "source $top/gdb-scripts/pfscale.py" \
	-ex "target remote :$port" "$@"
rc=$?
trap 'stop_guest; exit 1' INT
exit $rc
