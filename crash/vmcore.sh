#!/bin/bash
# make vmcore: boot the guest on a race (guest/run/vmcore), dump its memory
# from the QEMU monitor at the chosen point, in the formats the readers need:
#   DIR/vmcore          plain ELF              crash (+ crash/pfscale.so)
#   DIR/vmcore.kdump    kdump-compressed, zlib crash
#   DIR/vmcore.paging   ELF with virtual addrs gdb (+ vmlinux-gdb.py, pfscale.py)
# and print the command lines that open them.
#
#   crash/vmcore.sh -k ARTIFACT_DIR -i INITRAMFS -o DIR [-c CPUS] [-m MB]
#                   [-w race|panic] [-a KERNEL_ARGS]
#
# -w race   (default) dump while h_race_loop's threads race in the guest
#           (after one t_same_pages run); the console line names its PID
# -w panic  the guest panics (sysrq c) after one race; the kernel runs with
#           panic=0 (wait forever: this kernel has no pvpanic driver, so
#           QEMU's -action panic=pause would never fire) and the host dumps
#           once "Kernel panic" is on the console
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
art= initrd= out= cpus=4 mem=1024 at=race append=
while getopts "k:i:o:c:m:w:a:" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; o) out=$OPTARG ;; c) cpus=$OPTARG ;;
	m) mem=$OPTARG ;; w) at=$OPTARG ;; a) append=$OPTARG ;;
	*) sed -n '2,18s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
die() { echo "vmcore: $*" >&2; exit 1; }
[ -f "$art/bzImage" ] && [ -f "$initrd" ] && [ -n "$out" ] ||
	die "usage: crash/vmcore.sh -k ARTIFACT_DIR -i INITRAMFS -o DIR (see the header)"
case $at in
race) marker='PFSCALE-VMCORE race:' ;;
panic) marker='Kernel panic - not syncing' append="$append panic=0 pfscale.vmcore=panic" ;;
*) die "-w race or -w panic, not '$at'" ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
sock=$out/monitor.sock log=$out/console.log
core=$out/vmcore corez=$out/vmcore.kdump corep=$out/vmcore.paging
rm -f "$sock" "$log" "$core" "$corez" "$corep"

"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r vmcore -M "$sock" \
	-c "$cpus" -m "$mem" -a "$append" -l "$log" -t 900 &
qpid=$!
cleanup() {
	[ -S "$sock" ] && python3 "$top/crash/hmp.py" "$sock" quit >/dev/null 2>&1
	for _ in $(seq 20); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.5; done
	if kill -0 "$qpid" 2>/dev/null; then
		for c in $(pgrep -P "$qpid"); do kill "$c" 2>/dev/null; done
		kill "$qpid" 2>/dev/null
	fi
	wait "$qpid" 2>/dev/null
}
trap cleanup EXIT

echo "vmcore: waiting for '$marker' on the console ($log)"
line=
for _ in $(seq 1200); do
	[ -f "$log" ] && line=$(tr -d '\r' < "$log" | grep -m1 -F "$marker")
	[ -n "$line" ] && break
	kill -0 "$qpid" 2>/dev/null || break
	sleep 0.5
done
[ -n "$line" ] || die "no '$marker' on the console within 600 s (see $log)"
echo "vmcore: $line"
# The racing process, for the command lines below (race dumps only).
pid=$(sed -n 's/.* racing in pid \([0-9][0-9]*\) .*/\1/p' <<<"$line")
[ "$at" = race ] && [ -z "$pid" ] && die "no PID in '$line'"
[ "$at" = panic ] && sleep 2	# let panic() finish printing and stop the other CPUs

# dump-guest-memory is synchronous without -d; "stop" first so all three
# dumps show the same instant.
python3 "$top/crash/hmp.py" "$sock" stop "dump-guest-memory $core" \
	"dump-guest-memory -z $corez" "dump-guest-memory -p $corep" "info status" \
	> "$out/monitor.log" 2>&1
cleanup
trap - EXIT
for f in "$core" "$corez" "$corep"; do
	[ -s "$f" ] || die "QEMU wrote no $f (see $out/monitor.log)"
done
{ make -s -C "$top" build/pfscale.so && cp "$top/build/pfscale.so" "$out/pfscale.so"; } ||
	echo "vmcore: building crash/pfscale.c failed (is crash's defs.h in /usr/include/crash?)" >&2
tr -d '\r' < "$log" | grep '^PFSCALE-VMCORE counter ' | sed 's/^PFSCALE-VMCORE counter /  /' \
	> "$out/guest-counters.txt"

cat <<EOT

vmcore: the guest ($at) dumped at: $line
  $(du -h "$core" | cut -f1)	$core		plain ELF: crash
  $(du -h "$corez" | cut -f1)	$corez	kdump-compressed (zlib): crash, not gdb
  $(du -h "$corep" | cut -f1)	$corep	ELF with page-table virtual addresses: gdb
  console log $log; the guest's counters after its first race: $out/guest-counters.txt

crash (ps, vm PID, vtop -u do not work on 6.1: use pfps, pfvma, pfrss, pfpte):
  crash $art/vmlinux $core
  crash> extend $out/pfscale.so
  crash> pfcounters
  crash> pfps
  crash> pfvma ${pid:-PID}
  crash> pfrss ${pid:-PID}
  (the same with $corez)

gdb (on vmcore.paging only: on the plain ELF gdb silently reads vmlinux's initial data):
  gdb $art/vmlinux $corep \\
      -ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py"
  (gdb) pf-counters
  (gdb) pf-rss ${pid:-PID}

The dumps are $(du -sh "$out" | cut -f1) in all: rm -f $out/vmcore* when done.
EOT
