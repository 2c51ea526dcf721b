#!/bin/bash
# The harness fails, clearly and quickly, on every way a guest run can go
# wrong: a guest that hangs or panics, programs that crash, exit early,
# print no plan or too many results, skip unexpectedly or never run, and a
# kernel oops that does not panic. Each case is a real guest boot; the
# runner (tests/run.sh, or its parser tests/lib/tap-parse.sh on the boot's
# log) must report FAIL for it.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/harness.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
parse=$top/tests/lib/tap-parse.sh
# The logs of these deliberately bad boots go to their own directory, so
# that tests/run.sh's scan of every console log in OUT leaves them out.
h=$out/harness
mkdir -p "$h"
echo "1..14"

start=$(date +%s)
msg=$("$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 1 -m 256 -t 15 -r hang \
	-l "$h/hang-console.log" 2>&1)
rc=$?
took=$(( $(date +%s) - start ))
if [ $rc = 124 ] && [ $took -lt 40 ] && grep -q "timed out after 15s" <<<"$msg"; then
	echo "ok - harness: a hung guest is stopped by the timeout (exit 124 after ${took}s)"
else
	echo "# rc=$rc took=${took}s: $msg"
	echo "not ok - harness: a hung guest is stopped by the timeout"
fi

"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 1 -m 256 -t 60 -r panic \
	-l "$h/panic-console.log" >/dev/null 2>&1
rc=$?
if [ $rc != 124 ] && grep -q "Kernel panic" "$h/panic-console.log" &&
	! grep -q "pfscale-guest: done" "$h/panic-console.log"; then
	echo "ok - harness: a panicking guest ends QEMU and leaves the panic in the log (no done marker)"
else
	echo "not ok - harness: a panicking guest ends QEMU and leaves the panic in the log (rc=$rc)"
fi
res=$("$parse" guest panic "$h/panic-console.log" "$rc")
prc=$?
if [ $prc != 0 ] && grep -q '^FAIL  \[panic\] guest ran to the end' <<<"$res" &&
	grep -q '^FAIL  \[panic\] no kernel error in the console log.*Kernel panic' <<<"$res"; then
	echo "ok - harness: the runner fails the panicked boot: no done marker, 'Kernel panic' in the log"
else
	printf '%s\n' "$res" | sed 's/^/# /'
	echo "not ok - harness: the runner fails the panicked boot (parser exit $prc)"
fi

# Programs that fail in every way a test program can (tests/guest/h_fail.c,
# guest/run/badprogs), through the real runner, one boot on the stock path.
bad=$h/badprogs
rm -rf "$bad"
res=$("$top/tests/run.sh" -G -r badprogs -p stock -k "$art" -i "$initrd" -c 1 -m 256 -o "$bad" 2>&1)
rrc=$?
printf '%s\n' "$res" > "$h/badprogs.out"
# expect TEXT REGEX: one check that the runner printed a FAIL line matching REGEX.
expect() {
	if grep -Eq "^FAIL  $2" <<<"$res"; then
		echo "ok - harness: the runner fails $1"
	else
		echo "not ok - harness: the runner fails $1 (no FAIL line matching '$2'; see $h/badprogs.out)"
	fi
}
expect "a program killed by SIGSEGV halfway (plan 4, 2 results)" \
	'\[stock\] h_fail:segv: exited with 139 \(killed by signal 11\); planned 4 checks, reported 2$'
expect "a program killed by SIGBUS (plan 3, 1 result)" \
	'\[stock\] h_fail:bus: exited with 135 \(killed by signal 7\); planned 3 checks, reported 1$'
expect "a program that exits 1 after its plan and one result" \
	'\[stock\] h_fail:exit: exited with 1; planned 3 checks, reported 1$'
expect "a program that prints no plan (and exits 0)" \
	'\[stock\] h_fail:noplan: printed no plan'
expect "an unexpected skip (one not in tests/expected-skips)" \
	'\[stock\] h_fail: a skip that tests/expected-skips does not name # SKIP \[an unexpected skip'
expect "a program that reports more results than planned" \
	'\[stock\] h_fail:more: exited with 1; planned 1 checks, reported 2$'
expect "a listed program that never ran" '\[stock\] h_fail:never: never ran$'
expect "the kernel's report of the killed programs (segfault at, print_fatal_signals)" \
	'\[stock\] no kernel error in the console log \([0-9]+ lines, the first during h_fail:segv.*(segfault at|fatal signal)'
if [ $rrc != 0 ] && [ "$(tail -n1 <<<"$res" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed, .*/\1/p')" -ge 8 ]; then
	echo "ok - harness: tests/run.sh exits non-zero and counts the failures: $(tail -n1 <<<"$res")"
else
	echo "not ok - harness: tests/run.sh exits non-zero and counts the failures (exit $rrc: $(tail -n1 <<<"$res"))"
fi

# A real kernel oops that does not panic (qemu/boot.sh -O: no oops=panic):
# gdb stops the guest in h_fail's sched_rr_get_interval() call and sends it
# to the ud2 of the first BUG() in the kernel's bug table, so the kernel
# reports "kernel BUG at", "invalid opcode", an Oops, and kills h_fail; the
# guest lives on to its done marker.
olog=$h/oops-console.log
port=$(free_port $((1300 + $$ % 500)))
"$top/qemu/boot.sh" -q -O -k "$art/bzImage" -i "$initrd" -c 1 -m 256 -t 480 -r oops \
	-g -p "$port" -l "$olog" >"$h/oops-boot.out" 2>&1 &
qpid=$!
trap 'stop_boot "$qpid"' EXIT
line=$(wait_console "$olog" '^HFAIL oops:' 400 "$qpid")
if [ -n "$line" ] && command -v gdb >/dev/null; then
	timeout 120 gdb -batch -nx "$art/vmlinux" -ex "target remote :$port" \
		-x "$top/tests/host/harness-oops.gdb" >"$h/oops-gdb.out" 2>&1
fi
wait "$qpid"
orc=$?
trap - EXIT
res=$("$parse" guest oops "$olog" "$orc")
printf '%s\n' "$res" > "$h/oops.out"
if grep -q 'kernel BUG at' "$olog" && grep -q 'invalid opcode:' "$olog" &&
	! grep -q 'Kernel panic' "$olog" && grep -q 'pfscale-guest: done' "$olog"; then
	echo "ok - harness: gdb made a non-fatal oops (kernel BUG at, invalid opcode, no panic, the guest went on)"
else
	echo "not ok - harness: gdb made a non-fatal oops (see $olog, $h/oops-gdb.out)"
fi
if grep -Eq '^FAIL  \[oops\] h_fail:oops: exited with 1[0-9][0-9] \(killed by signal [0-9]+\); planned 2 checks, reported 1$' <<<"$res" &&
	grep -Eq '^FAIL  \[oops\] no kernel error in the console log .*during h_fail:oops' <<<"$res"; then
	echo "ok - harness: the runner fails the oops: the killed program and the kernel error, during h_fail:oops"
else
	echo "not ok - harness: the runner fails the oops: the killed program and the kernel error (see $h/oops.out)"
fi
