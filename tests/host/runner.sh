#!/bin/bash
# The runner's parser (tests/lib/tap-parse.sh, what tests/run.sh counts
# with) on recorded logs, no guest: each way of failing must give its FAIL
# line and a non-zero exit, and a passing log must give no FAIL at all.
# The logs are in tests/lib/recorded/ (see its README).
#
#   tests/host/runner.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
parse=$top/tests/lib/tap-parse.sh
rec=$top/tests/lib/recorded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..17"

# fails TEXT REGEX PARSER-ARGS...: the parser exits non-zero and prints a
# FAIL line matching REGEX.
fails() {
	local text=$1 re=$2 res rc
	shift 2
	res=$("$parse" "$@" 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -Eq "^FAIL  $re" <<<"$res"; then
		echo "ok - runner: $text"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (parser exit $rc, no FAIL line matching '$re')"
	fi
}

# passes TEXT NPASS PARSER-ARGS...: exit 0, no FAIL line, NPASS PASS lines.
passes() {
	local text=$1 npass=$2 res rc n
	shift 2
	res=$("$parse" "$@" 2>&1)
	rc=$?
	n=$(grep -c '^PASS' <<<"$res")
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$res" && [ "$n" = "$npass" ]; then
		echo "ok - runner: $text ($n PASS lines)"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (parser exit $rc, $n PASS lines, want $npass and no FAIL)"
	fi
}

# The control: a real passing boot, two programs (2 x their checks, 2
# program lines, the done marker, the kernel error scan).
passes "a recorded passing boot passes" 17 guest stock "$rec/passing.log" 0 t_single t_debugfs

fails "a program killed by SIGSEGV halfway" \
	'\[stock\] h_fail:segv: exited with 139 \(killed by signal 11\); planned 4 checks, reported 2$' \
	guest stock "$rec/segv-halfway.log" 0
fails "the segfault's kernel report (kmsg: segfault at)" \
	'\[stock\] no kernel error in the console log .*during h_fail:segv.*segfault at' \
	guest stock "$rec/segv-halfway.log" 0
fails "a program that exits 1 after its plan" \
	'\[stock\] h_fail:exit: exited with 1; planned 3 checks, reported 1$' \
	guest stock "$rec/exit-early.log" 0
fails "a program that prints no plan" '\[stock\] h_fail:noplan: printed no plan' \
	guest stock "$rec/no-plan.log" 0
fails "a skip that tests/expected-skips does not name" \
	'\[stock\] h_fail: a skip .* \[an unexpected skip' guest stock "$rec/unexpected-skip.log" 0

# The same skip with an allowlist entry for it: a SKIP, no FAIL.
printf '%s\n' '[stock] h_fail: a skip that tests/expected-skips does not name* -- runner.sh: allowed here' \
	> "$tmp/skips"
res=$(PFSCALE_SKIPS=$tmp/skips "$parse" guest stock "$rec/unexpected-skip.log" 0)
rc=$?
if [ $rc = 0 ] && grep -q '^SKIP  \[stock\] h_fail: a skip .*\[expected: runner.sh: allowed here\]' <<<"$res"; then
	echo "ok - runner: an allowlisted skip is a SKIP, with its reason"
else
	echo "not ok - runner: an allowlisted skip is a SKIP, with its reason"
fi
printf '%s\n' '[stock] h_fail: a skip that tests/expected-skips does not name*' > "$tmp/skips"
PFSCALE_SKIPS=$tmp/skips fails "an allowlist entry without a reason" 'expected-skips entry without' \
	skip stock "h_fail: a skip that tests/expected-skips does not name"

fails "a kernel BUG at between two passing programs" \
	'\[stock\] no kernel error in the console log \(.*during t_single.*kernel BUG at' \
	guest stock "$rec/kernel-bug-spliced.log" 0 t_single t_debugfs
fails "a boot that died of a kernel BUG (page_table_check) before any program" \
	'\[stock\] no kernel error in the console log \(.*during boot.*kernel BUG at mm/page_table_check.c' \
	guest stock "$rec/kernel-bug-at-boot.log" 0

# The passing log cut in the middle of t_debugfs: the guest died there.
sed '/^ok - t_debugfs: counters is read-only/q' "$rec/passing.log" > "$tmp/cut.log"
fails "a program the guest died under (no exit line)" '\[stock\] t_debugfs: did not finish' \
	guest stock "$tmp/cut.log" 0
fails "a guest that never reached its done marker" '\[stock\] guest ran to the end \(QEMU exit 0, no done' \
	guest stock "$tmp/cut.log" 0
fails "an expected program that never ran" '\[stock\] t_swap: never ran$' \
	guest stock "$rec/passing.log" 0 t_single t_debugfs t_swap
fails "a guest that timed out (QEMU exit 124)" '\[stock\] guest finished in time' \
	guest stock "$rec/passing.log" 124 t_single t_debugfs

# Host tests: their output and exit status.
printf '1..3\nok - a\nok - b\n' > "$tmp/host-short"
fails "a host test that reports fewer results than its plan" \
	'\[host x\] planned 3 checks, reported 2$' host "host x" "$tmp/host-short" 0
printf '1..2\nok - a\nok - b\n' > "$tmp/host-ok"
fails "a host test that exits non-zero (all its checks ok)" \
	'\[host x\] exited with 1$' host "host x" "$tmp/host-ok" 1
printf 'ok - a\n' > "$tmp/host-noplan"
fails "a host test that prints no plan" '\[host x\] printed no plan' host "host x" "$tmp/host-noplan" 0
