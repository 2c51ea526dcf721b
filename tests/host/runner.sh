#!/bin/bash
# The runner's parser (tests/lib/tap-parse.sh, what tests/run.sh counts
# with) on recorded logs, no guest: each way of failing must give its FAIL
# line and a non-zero exit, and a passing log must give no FAIL at all.
# The logs are in tests/lib/recorded/ (see its README). Then tests/run.sh
# itself, in a sandbox (a copy of the runner with a stand-in qemu/boot.sh
# and crafted host tests; no guest boots), guest/run/vmselftests' verdict on
# crafted selftest output, and every kernel error pattern on a recorded
# message.
#
#   tests/host/runner.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
parse=$top/tests/lib/tap-parse.sh
rec=$top/tests/lib/recorded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..54"

# fails TEXT REGEX PARSER-ARGS...: the parser ($PARSER, default $parse)
# exits non-zero and prints a FAIL line matching REGEX, and its end line
# last.
fails() {
	local text=$1 re=$2 res rc
	shift 2
	res=$("${PARSER:-$parse}" "$@" 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -Eq "^FAIL  $re" <<<"$res" && [ "$(tail -n1 <<<"$res" | cut -c1-6)" = "END   " ]; then
		echo "ok - runner: $text"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (parser exit $rc, no FAIL line matching '$re')"
	fi
}

# passes TEXT NPASS PARSER-ARGS...: exit 0, no FAIL line, NPASS PASS lines,
# the end line last.
passes() {
	local text=$1 npass=$2 res rc n
	shift 2
	res=$("$parse" "$@" 2>&1)
	rc=$?
	n=$(grep -c '^PASS' <<<"$res")
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$res" && [ "$n" = "$npass" ] &&
		[ "$(tail -n1 <<<"$res" | cut -c1-6)" = "END   " ]; then
		echo "ok - runner: $text ($n PASS lines)"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (parser exit $rc, $n PASS lines, want $npass and no FAIL)"
	fi
}

# The control: a real passing boot, two programs (2 x their checks, 2
# program lines, the done marker, the kernel error scan).
passes "a recorded passing boot passes" 17 guest stock "$rec/passing.log" 0 t_single t_debugfs

# make check's boot (guest/run/check): a "phase" line tags the results that
# follow with the path they ran on; a failure there names it.
sed 's/^# pfscale-guest: running t_single\r\?$/# pfscale-guest: phase stock\n&/' \
	"$rec/passing.log" >"$tmp/phases.log"
res=$("$parse" guest check "$tmp/phases.log" 0 t_single t_debugfs)
if grep -q '^PASS  \[check\] t_debugfs: reset <- 1 zeroes' <<<"$res" &&
	grep -q '^PASS  \[check stock\] t_single: the faults took the stock path' <<<"$res" &&
	! grep -q '^FAIL' <<<"$res"; then
	echo "ok - runner: a phase line tags the results after it with its path"
else
	printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
	echo "not ok - runner: a phase line tags the results after it with its path"
fi
sed 's/^ok - t_single: the faults took the stock path/not &/' "$tmp/phases.log" >"$tmp/phases-fail.log"
fails "a failure after a phase line names the phase" \
	'\[check stock\] t_single: the faults took the stock path$' \
	guest check "$tmp/phases-fail.log" 0 t_single t_debugfs

fails "a program killed by SIGSEGV halfway" \
	'\[stock\] h_fail:segv: exited with 139 \(killed by signal 11\); planned 4 checks, reported 2$' \
	guest stock "$rec/segv-halfway.log" 0
fails "the segfault's kernel report (kmsg: segfault at)" \
	'\[stock\] no kernel error in the console log .*during h_fail:segv.*segfault at' \
	guest stock "$rec/segv-halfway.log" 0
fails "a program that exits 1 after its plan" \
	'\[stock\] h_fail:exit: exited with 1; planned 3 checks, reported 1$' \
	guest stock "$rec/exit-early.log" 0
sed 's/^# pfscale-guest: t_single exited with 0\r\?$/# pfscale-guest: t_single exited with 143 after 900.0 s (killed by signal 15: timed out, PFSCALE_PROG_TIMEOUT=900)\nTerminated/' \
	"$rec/passing.log" >"$tmp/timed-out.log"
fails "a program guest/run/prog ended at its time limit, all its checks reported" \
	'\[stock\] t_single: exited with 143 \(killed by signal 15\); timed out, PFSCALE_PROG_TIMEOUT=900$' \
	guest stock "$tmp/timed-out.log" 0 t_single t_debugfs
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

# --- issue 26: the runner must not lose a failure ---------------------

# The parser's last line is its end line ("END   "): tests/run.sh fails a
# log whose parse has none.
res=$("$parse" guest stock "$rec/passing.log" 0 t_single t_debugfs)
if [ "$(tail -n1 <<<"$res" | cut -c1-6)" = "END   " ]; then
	echo "ok - runner: the parser ends its output with its end line"
else
	echo "not ok - runner: the parser ends its output with its end line (last: '$(tail -n1 <<<"$res")')"
fi

# sandbox: a copy of the runner (tests/run.sh, tests/lib/,
# tests/expected-skips) in $sb with a stand-in qemu/boot.sh and no host
# tests: tests/run.sh and its parser on crafted files, no guest.
sb=$tmp/top
sandbox() {
	rm -rf "$sb"
	mkdir -p "$sb/tests/host" "$sb/tests/guest" "$sb/qemu" "$sb/art" "$sb/out"
	cp "$top/tests/run.sh" "$top/tests/expected-skips" "$sb/tests/"
	cp -r "$top/tests/lib" "$sb/tests/"
	: > "$sb/tests/lib/host-consoles"
	: > "$sb/initrd"
	# The stand-in boot.sh: the console log is a copy of $FAKE_LOG (unset:
	# none written, as when boot.sh fails before QEMU starts), the exit
	# status $FAKE_RC.
	cat > "$sb/qemu/boot.sh" <<'EOB'
#!/bin/bash
while getopts "k:i:r:a:c:m:t:l:gGp:M:A:qOP:" o; do [ "$o" = l ] && log=$OPTARG; done
[ -n "${FAKE_LOG:-}" ] && cp "$FAKE_LOG" "$log"
exit "${FAKE_RC:-0}"
EOB
	chmod +x "$sb/qemu/boot.sh"
}
# hosttest NAME [MODE] < SCRIPT: a crafted host test in the sandbox.
hosttest() {
	{ echo '#!/bin/bash'; cat; } > "$sb/tests/host/$1.sh"
	chmod "${2:-755}" "$sb/tests/host/$1.sh"
}
# runfails TEXT REGEX RUN-ARGS...: the sandbox's tests/run.sh exits non-zero
# with a FAIL line matching REGEX. runpasses TEXT SUMMARY RUN-ARGS...: it
# exits 0 and its last line is SUMMARY.
sbrun() {
	res=$("$sb/tests/run.sh" -k "$sb/art" -i "$sb/initrd" -o "$sb/out" -r badprogs "$@" 2>&1)
	rc=$?
}
runfails() {
	local text=$1 re=$2
	shift 2
	sbrun "$@"
	if [ $rc != 0 ] && grep -Eq "^FAIL  $re" <<<"$res"; then
		echo "ok - runner: $text"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (tests/run.sh exit $rc, no FAIL line matching '$re')"
	fi
}
runpasses() {
	local text=$1 want=$2
	shift 2
	sbrun "$@"
	if [ $rc = 0 ] && [ "$(tail -n1 <<<"$res")" = "$want" ] && ! grep -q '^FAIL' <<<"$res"; then
		echo "ok - runner: $text ($want)"
	else
		printf '%s\n' "$res" | grep -v '^      ' | sed 's/^/# /'
		echo "not ok - runner: $text (tests/run.sh exit $rc, want '$want' and no FAIL)"
	fi
}

# Item 1: the kernel error patterns and the parser's own failures.
sandbox
echo 'foo(' >> "$sb/tests/lib/kernel-errors"
PARSER=$sb/tests/lib/tap-parse.sh fails "a malformed kernel error pattern (awk fails: no silent pass)" \
	'\[stock\] the parser read .*passing.log to the end \(awk exit [1-9].*; malformed pattern in .*kernel-errors: foo\($' \
	guest stock "$rec/passing.log" 0 t_single t_debugfs
sandbox
grep '^#' "$top/tests/lib/kernel-errors" > "$sb/tests/lib/kernel-errors"
PARSER=$sb/tests/lib/tap-parse.sh fails "a kernel error pattern file without a pattern (the scan would be off)" \
	'\[stock\] kernel error patterns: .*kernel-errors has none' \
	guest stock "$rec/passing.log" 0 t_single t_debugfs
rm "$sb/tests/lib/kernel-errors"
PARSER=$sb/tests/lib/tap-parse.sh fails "no kernel error pattern file" \
	'\[x\] kernel error patterns: .*kernel-errors is missing' console x "$rec/passing.log"
fails "a log that is not there" '\[x\] the parser read .*/nothing-here.log to the end \(awk exit [1-9]' \
	console x "$tmp/nothing-here.log"
# tests/run.sh: a parser that dies without its end line.
sandbox
# shellcheck disable=SC2016 # $2: the stand-in's
printf '#!/bin/bash\necho "PASS  [$2] one line, then the parser dies"\n' > "$sb/tests/lib/tap-parse.sh"
FAKE_LOG=$rec/passing.log runfails "a parse without the parser's end line" \
	'\[stock\] the parser read .*stock-console.log to the end \(no end line' -p stock

# Item 2: a plan of 0.
printf '1..0\n' > "$tmp/host-plan0"
fails "a plan of 0 without a skip reason fails" "\\[host x\\] printed the plan 1\\.\\.0 without '# SKIP reason'" \
	host "host x" "$tmp/host-plan0" 0
printf '1..0 # SKIP\n' > "$tmp/host-plan0-noreason"
fails "a plan of 0 skipped without a reason" "\\[host x\\] printed the plan 1\\.\\.0 # SKIP without a reason" \
	host "host x" "$tmp/host-plan0-noreason" 0
printf '1..0 # SKIP no network here\n' > "$tmp/host-plan0-skip"
fails "a plan of 0 skipped with a reason, not in the allowlist" \
	'\[host x\] every check skipped \(no network here\) \[an unexpected skip' host "host x" "$tmp/host-plan0-skip" 0
printf '%s\n' '[host x] every check skipped (no network here)* -- runner.sh: allowed here' > "$tmp/skips0"
if res=$(PFSCALE_SKIPS=$tmp/skips0 "$parse" host "host x" "$tmp/host-plan0-skip" 0) && grep -q '^SKIP  \[host x\] every check skipped (no network here) \[expected: runner.sh: allowed here\]' <<<"$res"; then
	echo "ok - runner: an allowlisted plan of 0 with a reason is a SKIP"
else
	echo "not ok - runner: an allowlisted plan of 0 with a reason is a SKIP"
fi

# Item 3: the done marker's rc and QEMU's exit status.
sed 's/pfscale-guest: done rc=0/pfscale-guest: done rc=1/' "$rec/passing.log" > "$tmp/done-rc1.log"
fails "a guest whose done marker says rc=1" '\[stock\] guest ran to the end \(done rc=1' \
	guest stock "$tmp/done-rc1.log" 0 t_single t_debugfs
sed 's/pfscale-guest: done rc=0/pfscale-guest: done/' "$rec/passing.log" > "$tmp/done-norc.log"
fails "a done marker without its rc" '\[stock\] guest ran to the end \(a done marker without rc=N' \
	guest stock "$tmp/done-norc.log" 0 t_single t_debugfs
fails "QEMU exit 1 after the done marker" '\[stock\] guest ran to the end \(QEMU exit 1 after the done marker' \
	guest stock "$rec/passing.log" 1 t_single t_debugfs

# Item 4: a host test without its run bit.
sandbox
hosttest plain 644 <<<'echo 1..1; echo "ok - plain: ran"'
runfails "a host test committed without its run bit" \
	'\[host plain\] not run: tests/host/plain.sh is not executable' -p none
# A sourced library (no #! line, sourced by a host test) is no test.
sandbox
cp "$top/tests/host/lib.sh" "$sb/tests/host/lib.sh"
chmod 644 "$sb/tests/host/lib.sh"
hosttest uses <<'EOT'
if false; then	# sourced as the host tests do, not run: it needs scripts/
	. "$top/tests/host/lib.sh"
fi
echo 1..1; echo "ok - uses: a host test that sources lib.sh"
EOT
runpasses "a sourced library in tests/host is not run" "2 passed, 0 failed, 0 skipped" -p none

# Item 5: the console logs each boot and host test wrote.
sandbox
cp "$rec/passing.log" "$sb/out/stock-console.log"
touch -d '2 days ago' "$sb/out/stock-console.log"
FAKE_RC=1 runfails "a guest boot that wrote no console log (a passing one of an earlier run there)" \
	'\[stock\] console log .*stock-console.log written by this boot \(missing: qemu/boot.sh exit 1' -p stock
FAKE_LOG=$rec/passing.log runpasses "a guest boot that wrote its console log (control)" \
	"17 passed, 0 failed, 0 skipped" -p stock
sandbox
echo 'boots y-console.log' > "$sb/tests/lib/host-consoles"
hosttest boots <<<'echo 1..1; echo "ok - boots: ran"'
runfails "a host test's listed console log that it did not write" \
	'\[host boots\] console log y-console.log: missing' -p none
sandbox
hosttest boots <<EOT
cp "$rec/passing.log" "\$PFSCALE_OUT/z-console.log"; echo 1..1; echo "ok - boots: ran"
EOT
runfails "a console log a host test wrote that tests/lib/host-consoles does not list" \
	'\[host boots\] wrote console log z-console.log, not listed for it in tests/lib/host-consoles' -p none
sandbox
printf '# comment\nboots a-console.log ?b-console.log c.log\n' > "$sb/tests/lib/host-consoles"
hosttest boots <<EOT
cp "$rec/passing.log" "\$PFSCALE_OUT/a-console.log"; cp "$rec/passing.log" "\$PFSCALE_OUT/c.log"
echo 1..1; echo "ok - boots: ran"
EOT
runpasses "a host test's listed logs, one of them written only sometimes: scanned, no failure" \
	"4 passed, 0 failed, 0 skipped" -p none
echo 'nosuchtest x-console.log' > "$sb/tests/lib/host-consoles"
runfails "tests/lib/host-consoles naming a host test that does not exist" \
	'\[host nosuchtest\] tests/lib/host-consoles lists the console logs of tests/host/nosuchtest.sh, which does not exist' -p none
sandbox
echo 'boots l5.log' > "$sb/tests/lib/host-consoles"
hosttest boots <<EOT
cp "$rec/kernel-bug-spliced.log" "\$PFSCALE_OUT/l5.log"; echo 1..1; echo "ok - boots: ran"
EOT
runfails "a host test's listed console log not named *console.log is scanned" \
	'\[l5\] no kernel error in the console log .*kernel BUG at' -p none

# Item 7: every kernel error pattern matches a recorded 6.1 message
# (tests/lib/recorded/kernel-errors.log), every one of those messages fails
# the scan, and every exception ("!") covers a recorded message
# (kernel-errors-ok.log) that does not.
ERRS=$top/tests/lib/kernel-errors MSGS=$rec/kernel-errors.log awk '
	BEGIN {
		while ((getline l < ENVIRON["MSGS"]) > 0) msg[++n] = l
		while ((getline p < ENVIRON["ERRS"]) > 0) {
			if (p ~ /^(#|!|$)/) continue
			for (i = 1; i <= n; i++) if (msg[i] ~ p) break
			if (i > n) { print "# no recorded message for the pattern: " p; bad = 1 }
		}
		exit bad
	}' && echo "ok - runner: every kernel error pattern matches a recorded message" ||
	echo "not ok - runner: every kernel error pattern matches a recorded message"
# (The scan counts the lines it caught: all of them, or name those missed.)
nmsg=$(wc -l < "$rec/kernel-errors.log")
res=$("$parse" console x "$rec/kernel-errors.log")
if grep -q "^FAIL  \[x\] no kernel error in the console log ($nmsg lines, " <<<"$res"; then
	echo "ok - runner: every recorded kernel error message fails the scan ($nmsg lines)"
else
	while IFS= read -r m; do
		printf '%s\n' "$m" > "$tmp/one.log"
		"$parse" console x "$tmp/one.log" >/dev/null && echo "# not caught: $m"
	done < "$rec/kernel-errors.log"
	echo "not ok - runner: every recorded kernel error message fails the scan"
fi
passes "a recorded expected message (an exception) passes the scan" 1 console x "$rec/kernel-errors-ok.log"
# The expected OOM report is t_memcg's alone, and only through its stack
# dump's end: another task's report, or a trace after it, still fails.
sed 's/t_memcg invoked/t_other invoked/' "$rec/kernel-errors-ok.log" > "$tmp/oom-other.log"
fails "another task's OOM report is not excused by t_memcg's exception" \
	'\[x\] no kernel error in the console log .*t_other invoked oom-killer' console x "$tmp/oom-other.log"
{ cat "$rec/kernel-errors-ok.log"; echo "[   19.000000] Call Trace:"; } > "$tmp/oom-then-trace.log"
fails "a stack dump after the expected OOM report's end still fails" \
	'\[x\] no kernel error in the console log \(1 lines.*Call Trace:' console x "$tmp/oom-then-trace.log"
ERRS=$top/tests/lib/kernel-errors MSGS=$rec/kernel-errors-ok.log awk '
	BEGIN {
		while ((getline l < ENVIRON["MSGS"]) > 0) msg[++n] = l
		while ((getline p < ENVIRON["ERRS"]) > 0) {
			if (p !~ /^!/) continue
			p = substr(p, 2); sub(/^</, "", p)
			for (i = 1; i <= n; i++) if (msg[i] ~ p) break
			if (i > n) { print "# no recorded message for the exception: " p; bad = 1 }
		}
		exit bad
	}' && echo "ok - runner: every kernel error exception matches a recorded message" ||
	echo "not ok - runner: every kernel error exception matches a recorded message"

# Item 8: guest/run/vmselftests' verdict on a selftest's own report
# (vmselftests --verdict NAME RC OUTPUT: one TAP line, nothing else run).
vms=$top/guest/run/vmselftests
# verdict TEXT WANT-REGEX RC < OUTPUT
verdict() {
	local text=$1 re=$2 rc=$3 line
	cat > "$tmp/selftest.out"
	# (Only a vmselftests that has --verdict: run whole, it would set the
	# host's vm sysctls.)
	if grep -q -- '--verdict' "$vms"; then
		line=$(sh "$vms" --verdict "selftests/vm: x" "$rc" "$tmp/selftest.out")
	else
		line="(guest/run/vmselftests has no --verdict: its TAP line is the exit status's alone)"
	fi
	if grep -Eq "$re" <<<"$line"; then
		echo "ok - runner: vmselftests: $text"
	else
		echo "not ok - runner: vmselftests: $text (got '$line')"
	fi
}
verdict "soft-dirty's failure with its unconditional ksft_exit_pass() (exit 0, fail:1)" \
	'^not ok - selftests/vm: x \(exit 0, but it reported fail:1' 0 <<'EOT'
TAP version 13
1..15
ok 1 Test test_simple
ok 2 Test test_vma_reuse dirty bit of allocated page
ok 3 Test test_vma_reuse dirty bit of reused address page
not ok 4 Test test_hugepage huge page allocation
ok 5 Test test_hugepage huge page dirty bit
ok 6 Test test_mprotect-anon dirty bit of new written page
ok 7 Test test_mprotect-anon soft-dirty clear after clear_refs
ok 8 Test test_mprotect-anon soft-dirty clear after marking RO
ok 9 Test test_mprotect-anon soft-dirty clear after marking RW
ok 10 Test test_mprotect-anon soft-dirty after rewritten
ok 11 Test test_mprotect-file dirty bit of new written page
ok 12 Test test_mprotect-file soft-dirty clear after clear_refs
ok 13 Test test_mprotect-file soft-dirty clear after marking RO
ok 14 Test test_mprotect-file soft-dirty clear after marking RW
ok 15 Test test_mprotect-file soft-dirty after rewritten
# Totals: pass:14 fail:1 xfail:0 xpass:0 skip:0 error:0
EOT
verdict "mremap_test's expand-merge failure (exit 0, a not ok line)" \
	'^not ok - selftests/vm: x \(exit 0, but it reported .*not ok 13 mremap_expand_merge' 0 <<'EOT'
TAP version 13
# Test configs:
	threshold_mb=64
	pattern_seed=1701734400

1..13
ok 1 # XFAIL mremap - Source and Destination Regions Overlapping
	Expected mremap failure
ok 2 # XFAIL mremap - Destination Address Misaligned (1KB-aligned)
	Expected mremap failure
ok 3 # XFAIL mremap - Source Address Misaligned (1KB-aligned)
	Expected mremap failure
ok 4 8KB mremap - Source PTE-aligned, Destination PTE-aligned
ok 5 2MB mremap - Source 1MB-aligned, Destination PTE-aligned
ok 6 2MB mremap - Source 1MB-aligned, Destination 1MB-aligned
ok 7 4MB mremap - Source PMD-aligned, Destination PTE-aligned
ok 8 4MB mremap - Source PMD-aligned, Destination 1MB-aligned
ok 9 4MB mremap - Source PMD-aligned, Destination PMD-aligned
ok 10 2GB mremap - Source PUD-aligned, Destination PTE-aligned
ok 11 2GB mremap - Source PUD-aligned, Destination 1MB-aligned
ok 12 2GB mremap - Source PUD-aligned, Destination PMD-aligned
not ok 13 mremap_expand_merge
# Totals: pass:9 fail:1 xfail:3 xpass:0 skip:0 error:0
EOT
verdict "an error result (exit 0, error:1)" '^not ok - selftests/vm: x \(exit 0, but it reported .*error:1' 0 <<'EOT'
1..2
ok 1 first
not ok 2 # error second
# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:1
EOT
verdict "a clean report and exit 0 pass" '^ok - selftests/vm: x$' 0 <<'EOT'
TAP version 13
1..2
ok 1 first
ok 2 # SKIP second
# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0
EOT
verdict "exit 4 is a skip" '^ok - selftests/vm: x # SKIP \(the test skipped itself\)$' 4 <<'EOT'
1..0 # SKIP soft-dirty is not support
EOT
verdict "exit 1 fails" '^not ok - selftests/vm: x \(exit 1\)$' 1 <<'EOT'
Bail out! mmap failed
# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0
EOT
