#!/bin/bash
# Host-side test: the readers agree with /proc and with each other, field by
# field (docs/debuggers.md, "One rule per field"). One guest runs
# tests/guest/h_parity (a process in a known state: a MAP_SHARED read-only
# file mapping, a private file mapping at an offset, PROT_NONE pages, a
# MAP_GROWSDOWN region, swapped pages, a THP, shared anonymous pages, over
# 1000 VMAs, threads with unsynced rss deltas), which prints /proc's view
# of itself (maps, smaps, pagemap, status) and pfscale's debugfs view and
# parks. The host stops the guest, dumps it (-z and -p), and reads the same
# process three ways:
#   gdb-live   gdb over the gdbstub          pf-mm, pf-rss, pf-range, pf-counters --json
#   gdb-dump   gdb on the -p dump             the same
#   crash-dump crash + pfscale.so on -z dump  pfvma, pfrss, pfpte, pfcounters -j
# tests/host/parity.py compares them and prints one result per check; a
# disagreement names the field, the VMA or region, and both values.
# Then, the guest still stopped, gdb makes the process's maple tree wrong
# in guest memory (a root pivot below the one before, a VMA's vm_start one
# page off: tests/host/gdb_maple_corrupt.py), has the monitor dump it
# again, reads pf-mm, and restores the words; gdb on that -p dump and crash
# on that -z dump read it too: all three must say the same problems and
# inconsistencies, and list the same VMAs.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/parity.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
log=$out/parity-console.log sock=$out/parity-monitor.sock
corez=$out/parity.kdump corep=$out/parity.paging so=$out/parity-pfscale.so
badz=$out/parity-bad.kdump badp=$out/parity-bad.paging
pout=$out/parity

# The guest and the readers; parity.py makes the comparisons.
setup=("guest helper h_parity printed /proc's view and parked"
	"QEMU dumped the stopped guest (-z and -p)"
	"gdb over the gdbstub read the process"
	"gdb on the -p dump read the process"
	"crash on the -z dump read the process")
ncompare=$(python3 "$top/tests/host/parity.py" --count)
echo "1..$((${#setup[@]} + ncompare))"
done_setup=0
result() {	# result 0|1 [DETAIL]: the next setup check
	if [ "$1" = 0 ]; then
		echo "ok - parity: ${setup[$done_setup]}"
	else
		echo "not ok - parity: ${setup[$done_setup]}${2:+ ($2)}"
	fi
	done_setup=$((done_setup + 1))
}
fail_rest() {	# every check not yet reported fails, with the reason
	while [ $done_setup -lt ${#setup[@]} ]; do result 1 "$1"; done
	python3 "$top/tests/host/parity.py" --fail-all "$1"
	exit 0
}
for tool in gdb crash; do
	command -v $tool >/dev/null || fail_rest "no $tool (make deps installs it)"
done

port=$(free_port $((5234 + $$ % 1000)))
qpid=
cleanup() {
	[ -n "$qpid" ] || return
	[ -S "$sock" ] && python3 "$top/crash/hmp.py" "$sock" quit >/dev/null 2>&1
	stop_boot "$qpid"
	qpid=
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

rm -f "$log" "$sock" "$corez" "$corep" "$badz" "$badp" "$pout".*	# nothing stale may pass
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r parity -g -p "$port" -M "$sock" \
	-m 1024 -l "$log" -t 900 >"$out/parity-boot.out" 2>&1 &
qpid=$!
ready=$(wait_console "$log" '^PARITY READY pid=[0-9]+$' 400 "$qpid")
pid=${ready#PARITY READY pid=}
[ -n "$ready" ] && ! complete_lines "$log" | grep -q '^PARITY error'
result $? "$(complete_lines "$log" | grep -m1 '^PARITY error' || echo "no READY line in $log")"
[ -n "$ready" ] || fail_rest "no guest helper"

# Stop the guest, then dump it: all three readers see this one state.
python3 "$top/crash/hmp.py" "$sock" stop "dump-guest-memory -z $corez" \
	"dump-guest-memory -p $corep" "info status" >"$out/parity-monitor.log" 2>&1
[ -s "$corez" ] && [ -s "$corep" ] && grep -q paused "$out/parity-monitor.log"
result $? "see $out/parity-monitor.log"

# regions: "NAME START END" of the helper's regions
regions=$(complete_lines "$log" | sed -n 's/^PARITY region //p')
# gdb_reader TARGET-ARGS... [-- ARGS-AFTER...]: the gdb commands, each
# section after @@NAME
gdb_reader() {
	local args=(-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py")
	local after=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift && after=("$@")
	args+=(-ex 'echo @@mm\n' -ex "pf-mm $pid --json"
		-ex 'echo @@rss\n' -ex "pf-rss $pid --json"
		-ex 'echo @@range\n' -ex "pf-range 0 0x800000000000 $pid --json"
		-ex 'echo @@counters\n' -ex 'pf-counters --json')
	while read -r name start end; do
		args+=(-ex "echo @@region $name\\n" -ex "pf-range $start $end $pid --json")
	done <<<"$regions"
	args+=("${after[@]}" -ex 'echo @@end\n')
	timeout 600 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" "${args[@]}"
}
# The tree made wrong, dumped, read, restored: all while gdb holds every
# vCPU stopped (the guest was stopped by the monitor before, and nothing
# here resumes it), so no guest code sees the bad words.
gdb_reader -ex "target remote :$port" -- \
	-ex "source $top/tests/host/gdb_maple_corrupt.py" \
	-ex "pf-test-corrupt pivot $pid" -ex "pf-test-corrupt vmstart $pid" \
	-ex "shell python3 $top/crash/hmp.py $sock 'dump-guest-memory -z $badz' 'dump-guest-memory -p $badp' >$out/parity-bad-monitor.log 2>&1" \
	-ex 'echo @@badmm\n' -ex "pf-mm $pid --json" \
	-ex 'pf-test-corrupt restore' >"$pout.gdb-live" 2>&1 </dev/null
grep -q '^@@end' "$pout.gdb-live" && ! grep -qE 'Traceback|internal error' "$pout.gdb-live"
result $? "see $pout.gdb-live"
cleanup		# gdb's exit has killed QEMU already (the stub's 'k')
gdb_reader -ex "core-file $corep" -- -ex "core-file $badp" \
	-ex 'echo @@badmm\n' -ex "pf-mm $pid --json" >"$pout.gdb-dump" 2>&1 </dev/null
grep -q '^@@end' "$pout.gdb-dump" && ! grep -qE 'Traceback|internal error' "$pout.gdb-dump"
result $? "see $pout.gdb-dump"

if make -s -C "$top" build/pfscale.so >"$out/parity-make.log" 2>&1 && cp "$top/build/pfscale.so" "$so"; then
	# No markers: crash's echo is not ordered with the extension's output;
	# parity.py takes the JSON lines in this order.
	{
		echo "extend $so"
		echo "pfvma -j $pid"
		echo "pfrss -j $pid"
		echo "pfpte -j $pid 0 800000000000"
		echo "pfcounters -j"
		while read -r name start end; do
			echo "pfpte -j $pid ${start#0x} ${end#0x}"
		done <<<"$regions"
		echo quit
	} >"$pout.crash-cmds"
	timeout 600 crash -s "$art/vmlinux" "$corez" -i "$pout.crash-cmds" >"$pout.crash-dump" 2>&1 </dev/null
	printf 'extend %s\npfvma -j %s\nquit\n' "$so" "$pid" >"$pout.crash-bad-cmds"
	timeout 600 crash -s "$art/vmlinux" "$badz" -i "$pout.crash-bad-cmds" >"$pout.crash-bad" 2>&1 </dev/null
fi
njson=$(grep -c '^{' "$pout.crash-dump" 2>/dev/null)
[ "$njson" = $((4 + $(grep -c . <<<"$regions"))) ] && ! grep -q '^pf[a-z]*: ' "$pout.crash-dump"
result $? "${njson:-no} JSON lines; see $pout.crash-dump $out/parity-make.log"

res=$(python3 "$top/tests/host/parity.py" "$log" "gdb-live=$pout.gdb-live" \
	"gdb-dump=$pout.gdb-dump" "crash-dump=$pout.crash-dump" "crash-dump:badmm=$pout.crash-bad")
echo "$res"
# The dumps are kept only when something failed, or with PFSCALE_KEEP_VMCORE.
grep -q '^not ok' <<<"$res" || [ -n "${PFSCALE_KEEP_VMCORE:-}" ] || rm -f "$corez" "$corep" "$badz" "$badp"
exit 0
