#!/bin/bash
# Boot a pfscale kernel + initramfs in QEMU.
#
#   qemu/boot.sh -k BZIMAGE -i INITRD [options] [-- EXTRA QEMU ARGS]
#
#   -k FILE     kernel (bzImage)
#   -i FILE     initramfs (cpio)
#   -r LIST     guest run scripts, comma separated (pfscale.run=LIST)
#   -a ARGS     extra kernel command line
#   -c N        vCPUs (default 4), as N sockets of one core: without ACPI a
#               plain -smp N brings up one CPU; the guest checks it sees N
#   -m MB       memory (default 1024)
#   -t SECS     hard timeout (default 600); a hung guest fails, exit 124
#   -l FILE     console log (default: next to the kernel)
#   -g          gdbstub on tcp::PORT (-p), -G also waits for gdb (-S)
#   -p PORT     gdbstub port (default 1234)
#   -M SOCK     HMP monitor on a unix socket (for dump-guest-memory)
#   -A ACCEL    auto (default), kvm or tcg (CPU model: PFSCALE_QEMU_CPU, default
#               qemu64; e.g. qemu64,+la57 for 5-level paging); auto uses KVM only when a short
#               probe boot proves it works, else TCG (multi-threaded)
#   -q          quiet: console only to the log, not to stdout
#   -O          no oops=panic (tests/host/harness.sh: a non-fatal oops)
#   -P FILE     load the pfcost TCG plugin (qemu/plugin/pfcost.c, built by
#               make plugin): every interval between the guest's pfcost
#               markers appends one JSON record to FILE; functions and data
#               are named from the System.map next to the kernel, and
#               the address map comes from its vmlinux (qemu/pfcost-layout).
#               PFSCALE_PFCOST_ARGS (environment) adds plugin arguments, e.g.
#               top=30 or print=on (a summary line per interval on stderr)
#
# The kernel command line always has oops=panic (an oops ends the guest at
# once instead of leaving a half-dead one to time out; not panic_on_warn: a
# WARNING already fails tests/run.sh's log scan, and the run goes on to
# report the rest), print_fatal_signals=1
# (a program killed by SIGSEGV/SIGBUS/... is reported, as "kmsg: " lines in
# the log; see guest/run/prog) and page_table_check=on (CONFIG_PAGE_TABLE_CHECK
# of the test kernel; ignored by the others). PFSCALE_APPEND (environment)
# is added after -a, to every boot: e.g. PFSCALE_APPEND=page_table_check=off
# to look past a page_table_check BUG (the last of two settings wins).
#
# Exit status: QEMU's (0 when the guest ran reboot -f), 124 on timeout, 125 when
# the guest did not reach userspace in PFSCALE_EARLY_BOOT_SECS, twice.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/common.sh
. "$here/../scripts/common.sh"

kernel= initrd= run= append= cpus=4 mem=1024 timeout=600 log= gdb= gdbport=1234
monitor= accel=${PFSCALE_ACCEL:-auto} quiet= oops=oops=panic pfcost=
while getopts "k:i:r:a:c:m:t:l:gGp:M:A:qOP:" o; do
	case $o in
	k) kernel=$OPTARG ;; i) initrd=$OPTARG ;; r) run=$OPTARG ;;
	a) append=$OPTARG ;; c) cpus=$OPTARG ;; m) mem=$OPTARG ;;
	t) timeout=$OPTARG ;; l) log=$OPTARG ;; g) gdb=-s ;; G) gdb=-S ;;
	p) gdbport=$OPTARG ;; M) monitor=$OPTARG ;; A) accel=$OPTARG ;; q) quiet=1 ;;
	O) oops= ;; P) pfcost=$OPTARG ;;
	*) sed -n '2,40s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -f "$kernel" ] || die "no kernel given or not found: '$kernel'"
[ -f "$initrd" ] || die "no initramfs given or not found: '$initrd'"
case "$cpus" in ''|*[!0-9]*) die "bad -c '$cpus'" ;; esac
[ -n "$log" ] || log=$(dirname "$kernel")/console.log

# KVM: only if a short probe boot of this very kernel reaches userspace.
kvm_works() {
	[ -w /dev/kvm ] || return 1
	local stamp
	stamp="$PFSCALE_CACHE/kvm-probe.$(sha256sum "$kernel" | cut -c1-12)"
	if [ ! -f "$stamp" ]; then
		local plog
		plog=$(mktemp)
		timeout -k 2 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 \
			-display none -no-reboot -serial "file:$plog" -kernel "$kernel" \
			-initrd "$initrd" -append "console=ttyS0 nokaslr panic=-1" \
			>/dev/null 2>&1 </dev/null
		if grep -q 'pfscale-guest: done' "$plog"; then echo yes; else echo no; fi > "$stamp"
		rm -f "$plog"
	fi
	[ "$(cat "$stamp")" = yes ]
}

# The plugin counts what TCG executes: -P means TCG.
[ -n "$pfcost" ] && [ "$accel" = auto ] && accel=tcg
case "$accel" in
auto) if kvm_works; then accel=kvm; else accel=tcg; fi ;;
kvm|tcg) ;;
*) die "bad -A '$accel' (auto, kvm or tcg)" ;;
esac
if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu host)
else
	accel_args=(-accel tcg,thread=multi -cpu "${PFSCALE_QEMU_CPU:-qemu64}")
fi

cmdline="console=ttyS0 nokaslr panic=-1 $oops print_fatal_signals=1 page_table_check=on"
cmdline="${cmdline/  / } pfscale.cpus=$cpus"
# Two NUMA nodes where the kernel can emulate them (the test kernels):
# move_pages(), mbind() and NUMA-hinting faults race the fault paths. Not
# with one vCPU: a node without a CPU makes 6.1's workqueue setup WARN
# ("workqueue cpumask: online intersect > possible intersect").
[ "$cpus" -ge 2 ] && grep -qx CONFIG_NUMA_EMU=y "$(dirname "$kernel")/.config" 2>/dev/null &&
	cmdline="$cmdline numa=fake=2"
[ -n "$run" ] && cmdline="$cmdline pfscale.run=$run"
[ -n "$append" ] && cmdline="$cmdline $append"
[ -n "${PFSCALE_APPEND:-}" ] && cmdline="$cmdline $PFSCALE_APPEND"

args=("${accel_args[@]}" -m "$mem" -smp "$cpus,sockets=$cpus,cores=1,threads=1"
	-display none -no-reboot -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-device vmcoreinfo)
if [ -n "$quiet" ]; then
	args+=(-serial "file:$log")
else
	args+=(-chardev "stdio,id=ser0,logfile=$log,signal=off" -serial chardev:ser0)
fi
[ -n "$gdb" ] && args+=(-gdb "tcp::$gdbport")
[ "$gdb" = -S ] && args+=(-S)
[ -n "$monitor" ] && args+=(-monitor "unix:$monitor,server,nowait")
if [ -n "$pfcost" ]; then
	[ "$accel" = tcg ] || die "-P needs TCG: the plugin counts what TCG executes"
	make -s -C "$here/.." plugin >&2 || die "cannot build the pfcost plugin (make plugin)"
	: > "$pfcost" || die "cannot write the pfcost report '$pfcost'"
	plugin="$here/../build/pfcost.so,out=$(realpath "$pfcost")"
	map=$(dirname "$kernel")/System.map
	[ -f "$map" ] && plugin="$plugin,map=$map"
	# the guest kernel's address map (qemu/pfcost-layout: from its vmlinux)
	plugin="$plugin,$("$here/pfcost-layout" "$(dirname "$kernel")" "${PFSCALE_QEMU_CPU:-qemu64}")"
	[ -n "${PFSCALE_PFCOST_ARGS:-}" ] && plugin="$plugin,$PFSCALE_PFCOST_ARGS"
	args+=(-plugin "$plugin")
	case ",${PFSCALE_PFCOST_ARGS:-}," in *,print=on,*) args+=(-d plugin) ;; esac
fi

: > "$log"
echo "pfscale: qemu ($accel, $cpus vCPUs, ${mem}M, timeout ${timeout}s), console log $log" >&2
# A guest that has not reached userspace after PFSCALE_EARLY_BOOT_SECS
# (default 300; a TCG boot gets there in seconds) is stopped rather than
# left to the whole timeout, and booted once more (its log kept as
# LOG.stalled): seen twice in about a hundred make test boots, a TCG guest
# hung in the RCU-tasks self tests, before any test ran. A second stall
# fails (exit 125). Not while gdb holds the guest (-G) or may stop it (-g).
early=${PFSCALE_EARLY_BOOT_SECS:-300}
# boot_watched: one QEMU run; sets rc, and stalled if it was stopped.
boot_watched() {
	local waited=0

	stalled=
	timeout -k 5 "$timeout" qemu-system-x86_64 "${args[@]}" "$@" </dev/null &
	qemu=$!
	while [ -z "$gdb" ] && kill -0 "$qemu" 2>/dev/null; do
		if grep -q 'Run /init as init process' "$log" 2>/dev/null; then
			break
		elif [ "$waited" -ge "$early" ]; then
			stalled=1
			kill "$qemu" 2>/dev/null
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	wait "$qemu"
	rc=$?
}
# A background job ignores SIGINT: pass ^C and TERM on to QEMU.
trap 'kill "$qemu" 2>/dev/null' INT TERM
boot_watched "$@"
if [ -n "$stalled" ]; then
	msg="pfscale: guest stalled in early boot: no userspace after ${early}s (PFSCALE_EARLY_BOOT_SECS; console log kept as $log.stalled); booting it once more"
	echo "$msg" >&2
	printf '\n%s\n' "$msg" >> "$log"
	mv "$log" "$log.stalled"
	: > "$log"
	boot_watched "$@"
fi
if [ -n "$stalled" ]; then
	msg="pfscale: guest stalled in early boot again: no userspace after ${early}s (PFSCALE_EARLY_BOOT_SECS; console log $log, the first $log.stalled)"
	echo "$msg" >&2
	printf '\n%s\n' "$msg" >> "$log"
	exit 125
fi
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "pfscale: guest timed out after ${timeout}s (console log $log)" >&2
	exit 124
fi
exit $rc
