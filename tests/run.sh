#!/bin/bash
# Host-side test runner: boot the test kernel, run the guest tests (TAP on
# the serial console), run the host-side tests, scan every console log for
# kernel errors, and print one summary whose last line is
# "N passed, N failed, N skipped"; exit non-zero on any failure.
#
#   tests/run.sh -k ARTIFACT_DIR -i INITRAMFS [-c CPUS] [-m MB] -o OUTDIR
#                [-s SECS] [-G] [-r RUNLIST] [-p PATHS] [-O]
#
# -G: guest tests only (no host-side tests), e.g. for the KASAN kernel.
# -s SECS: soak instead: loop the guest tests for SECS seconds on each path
# (guest/run/soak), no host-side tests.
# -r RUNLIST: guest run scripts instead of "tests" (tests/host/harness.sh).
# -p PATHS: the boots, comma separated: stock, atomic (the fault paths of
# the -k kernel), widened (the race tests once more on the atomic path with
# every race window widened, PFSCALE_RACE_WINDOW_US, default 50 us, with a
# third of their fixed times and rounds; needs
# CONFIG_PFSCALE_RACE_WINDOWS), check (make check's one boot: the race
# tests widened on the atomic path, then on the stock path switched at run
# time, with a third of their fixed times; guest/run/check), unpatched (the
# same tests on
# PFSCALE_STOCK_ART, the pristine 6.1 build of the test config: the
# baseline, where the checks that need pfscale skip by
# tests/expected-skips; with a third of the fixed times, as check), none
# (no guest boot, the host tests only).
# l5 (the race tests of L5_TESTS on the atomic path of a guest with 5-level
# paging: a CPU with LA57, CONFIG_X86_5LEVEL; t_populate checks that the
# address space has 5 levels).
# Default: stock,atomic,widened,l5, and unpatched if PFSCALE_STOCK_ART is
# set (make test sets it).
# -O: boot without oops=panic (qemu/boot.sh -O).
# PFSCALE_HOST_TESTS="NAME ...": only these tests/host/NAME.sh (make check);
# the others are listed as not run, in a diagnostic line.
#
# What fails (tests/lib/tap-parse.sh is the parser, tests/lib/kernel-errors
# the kernel error patterns, tests/expected-skips the skips that may pass):
# a "not ok" line; a skip not in the allowlist; a program (guest or host)
# that prints no plan or a count of results other than its plan (a plan of
# 0 only as "1..0 # SKIP reason", then through the allowlist), exits
# non-zero or dies by a signal, or never runs; a host test without its run
# bit (a skip, so through the allowlist; a sourced library is no test); a
# guest that times out, panics, does not reach its done marker, or whose
# done marker or QEMU exit status is non-zero; a kernel error pattern in
# any console log written during the run (the guest boots' and the host
# tests'); a boot's console log that is missing (each guest boot's, and each
# host test's as tests/lib/host-consoles lists them), or a console log a
# host test wrote that the list does not name; a log whose parse does not
# end with the parser's end line (the parser failed).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
parse=$top/tests/lib/tap-parse.sh
art= initrd= cpus=4 mem=1024 out=build/test soak= guest_only= runlist=tests
paths=stock,atomic,widened,l5${PFSCALE_STOCK_ART:+,unpatched} nooops=
while getopts "k:i:c:m:o:s:Gr:p:O" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; c) cpus=$OPTARG ;; m) mem=$OPTARG ;;
	o) out=$OPTARG ;; s) soak=$OPTARG ;; G) guest_only=1 ;; r) runlist=$OPTARG ;;
	p) paths=$OPTARG ;; O) nooops=-O ;; *) exit 2 ;;
	esac
done
soakargs=
if [ -n "$soak" ]; then
	runlist=soak soakargs="pfscale.soak=$soak"
	export PFSCALE_TEST_TIMEOUT=$((soak + 900))
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp=$out/.run-start
: > "$stamp"
scanned=" "
pass=0 fail=0 skip=0

# tally LABEL LOG: count the parser's PASS/FAIL/SKIP lines on stdin, echo
# them all but its end line ("END   ...", its last): without one, the parser
# failed or was cut short, and that is a FAIL.
tally() {
	local line ended=
	while IFS= read -r line; do
		case "$line" in
		"END   "*) ended=1; continue ;;
		"PASS  "*) pass=$((pass + 1)) ;;
		"FAIL  "*) fail=$((fail + 1)) ;;
		"SKIP  "*) skip=$((skip + 1)) ;;
		esac
		printf '%s\n' "$line"
	done
	[ -n "$ended" ] && return
	echo "FAIL  [$1] the parser read $2 to the end (no end line: tests/lib/tap-parse.sh failed or was cut short)"
	fail=$((fail + 1))
}

# failed TEXT: one FAIL of the runner's own.
failed() {
	echo "FAIL  $1"
	fail=$((fail + 1))
}

# backdated_stamp FILE: a time stamp one second in the past, so that a file
# written right after it is -newer than it despite the file system's
# coarse clock.
backdated_stamp() {
	touch -d "@$(($(date +%s) - 1))" "$1"
}

# The guest programs that must run: every tests/guest/t_*.c and every t_*
# the initramfs has (a test missing from the initramfs never ran).
expected_programs() {
	case $runlist in
	tests|soak|widened|check)
		{
			cpio -it --quiet < "$initrd" 2>/dev/null |
				sed -n 's|^pfscale/bin/\(t_[^/]*\)$|\1|p'
			for c in "$top"/tests/guest/t_*.c; do basename "$c" .c; done
		} | sort -u | tr '\n' ' '
		[ "$runlist" = tests ] && echo vmselftests_fresh vmselftests
		[ "$runlist" = widened ] && echo race_windows
		[ "$runlist" = check ] && echo race_windows to_stock
		;;
	esac
}

# boot_guest NAME ARTIFACT [kernel args]: one guest boot, its log through
# the parser. The log of an earlier run is removed first: a boot that wrote
# none leaves none.
boot_guest() {
	local name=$1 kart=$2 append=${3:-} log=$out/$1-console.log rc
	rm -f "$log"
	# shellcheck disable=SC2086 # $nooops: empty or -O
	"$top/qemu/boot.sh" -q -k "$kart/bzImage" -i "$initrd" -c "$cpus" -m "$mem" $nooops \
		-t "${PFSCALE_TEST_TIMEOUT:-1200}" -r "$runlist" -a "$append" -l "$log"
	rc=$?
	scanned="$scanned$log "
	if [ ! -f "$log" ]; then
		failed "[$name] console log $log written by this boot (missing: qemu/boot.sh exit $rc)"
		return
	fi
	# shellcheck disable=SC2046 # one word per program
	tally "$name" "$log" < <("$parse" guest "$name" "$log" "$rc" $(expected_programs))
}

# Every guest test runs on both fault paths, in two boots of one kernel,
# and on the unpatched kernel. On 5-level paging: the races of every table
# level and the parking sites most tests meet (populates, same-page
# losses, zaps with MADV_FREE and reclaim, the switch, fork's COW).
L5_TESTS=t_populate,t_same_pages,t_zap,t_switch,t_fork
for path in ${paths//,/ }; do
	case $path in
	stock) boot_guest stock "$art" "$soakargs" ;;
	atomic)
		if grep -qx 'CONFIG_PFSCALE_ATOMIC_PTE=y' "$art/.config"; then
			boot_guest atomic "$art" "pfscale.atomic_pte=1 $soakargs"
		else
			tally atomic - < <("$parse" skip atomic "guest tests on the atomic path (kernel built without CONFIG_PFSCALE_ATOMIC_PTE)")
		fi
		;;
	widened)
		if [ -n "$soak" ]; then
			:	# soak loops the plain boots only
		elif grep -qx 'CONFIG_PFSCALE_RACE_WINDOWS=y' "$art/.config"; then
			saved=$runlist
			[ "$runlist" = tests ] && runlist=widened
			# A third of the fixed times and rounds (as check):
			# the windows do the widening, every evidence check
			# stays; the plain atomic boot runs them all.
			boot_guest widened "$art" "pfscale.atomic_pte=1 pfscale.race_window_us=${PFSCALE_RACE_WINDOW_US:-50} pfscale.quick=1"
			runlist=$saved
		else
			tally widened - < <("$parse" skip widened "race tests with widened race windows (kernel built without CONFIG_PFSCALE_RACE_WINDOWS)")
		fi
		;;
	check)
		if grep -qx 'CONFIG_PFSCALE_RACE_WINDOWS=y' "$art/.config"; then
			saved=$runlist
			runlist=check
			boot_guest check "$art" "pfscale.atomic_pte=1 pfscale.race_window_us=${PFSCALE_RACE_WINDOW_US:-50} pfscale.quick=1"
			runlist=$saved
		else
			tally check - < <("$parse" skip check "make check's boot (kernel built without CONFIG_PFSCALE_RACE_WINDOWS)")
		fi
		;;
	l5)
		if [ -n "$soak" ]; then
			:	# soak loops the plain boots only
		elif grep -qx 'CONFIG_X86_5LEVEL=y' "$art/.config" &&
			grep -qx 'CONFIG_PFSCALE_ATOMIC_PTE=y' "$art/.config"; then
			saved=$runlist
			runlist=one
			PFSCALE_QEMU_CPU=qemu64,+la57 boot_guest l5 "$art" \
				"pfscale.atomic_pte=1 pfscale.la57=1 pfscale.test=$L5_TESTS"
			runlist=$saved
		else
			tally l5 - < <("$parse" skip l5 "race tests on 5-level paging (kernel built without CONFIG_X86_5LEVEL or CONFIG_PFSCALE_ATOMIC_PTE)")
		fi
		;;
	unpatched)
		if [ -f "${PFSCALE_STOCK_ART:-}/bzImage" ]; then
			# The baseline: the same programs and checks, with
			# make check's third of the fixed times and rounds
			# (what it shows is that the checks pass on pristine
			# 6.1, not the patched paths' races); a soak loops
			# the full ones.
			boot_guest unpatched "$PFSCALE_STOCK_ART" "${soakargs:-pfscale.quick=1}"
		else
			tally unpatched - < <("$parse" skip unpatched "guest tests on the unpatched kernel (no PFSCALE_STOCK_ART/bzImage: '${PFSCALE_STOCK_ART:-}')")
		fi
		;;
	none) ;;
	*) echo "tests/run.sh: unknown path '$path'" >&2; exit 2 ;;
	esac
done

# is_library FILE: a tests/host/*.sh that the host tests source, not a
# test: it has no #! line and another one sources it (". .../NAME.sh").
is_library() {
	local f=$1 base o
	base=$(basename "$f")
	[ "$(head -c2 "$f")" = '#!' ] && return 1
	for o in "$(dirname "$f")"/*.sh; do
		[ "$o" = "$f" ] && continue
		grep -Eq "^[[:space:]]*(\\.|source)[[:space:]].*/${base//./\\.}\"?([[:space:];&|]|\$)" "$o" && return 0
	done
	return 1
}

# host_consoles NAME: the console logs tests/lib/host-consoles lists for
# tests/host/NAME.sh, space separated ("?LOG": written only sometimes).
host_consoles() {
	awk -v n="$1" '$1 == n { for (i = 2; i <= NF; i++) printf " %s", $i }' "$consoles_list"
}

# Host-side tests: each tests/host/*.sh prints a plan and TAP lines like a
# guest program; its exit status counts too. Then the console logs it
# wrote: those tests/lib/host-consoles lists for it must be there (they are
# removed before it runs), and every *console.log it wrote must be listed.
consoles_list=$top/tests/lib/host-consoles
consoles=
if [ -z "$soak$guest_only" ]; then
	if [ ! -f "$consoles_list" ]; then
		failed "[host] the host tests' console logs are listed ($consoles_list is missing)"
		consoles_list=/dev/null
	fi
	for t in "$top"/tests/host/*.sh; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .sh)
		if [ -n "${PFSCALE_HOST_TESTS:-}" ] && [[ " $PFSCALE_HOST_TESTS " != *" $name "* ]]; then
			is_library "$t" || echo "      [host $name] not run (PFSCALE_HOST_TESTS: $PFSCALE_HOST_TESTS)"
			continue
		fi
		if [ ! -x "$t" ]; then
			is_library "$t" && continue
			tally "host $name" - < <("$parse" skip "host $name" \
				"not run: ${t#"$top"/} is not executable (committed without its run bit?)")
			continue
		fi
		listed="$(host_consoles "$name") "
		set -f	# "?LOG" is no glob
		for l in $listed; do rm -f "$out/${l#\?}"; done
		set +f
		tstamp=$out/.host-$name-start
		backdated_stamp "$tstamp"
		# Not the filter: the runner's own test runs tests/run.sh again.
		env -u PFSCALE_HOST_TESTS PFSCALE_ART="$art" PFSCALE_INITRD="$initrd" PFSCALE_OUT="$out" "$t" \
			> "$out/host-$name.out" 2>&1 < /dev/null
		tally "host $name" "$out/host-$name.out" < <("$parse" host "host $name" "$out/host-$name.out" $?)
		set -f
		for l in $listed; do
			if [ -f "$out/${l#\?}" ]; then
				consoles="$consoles $out/${l#\?} "
			elif [ "${l#\?}" = "$l" ]; then
				failed "[host $name] console log $l: missing (no boot of tests/host/$name.sh wrote it; tests/lib/host-consoles lists it)"
			fi
		done
		set +f
		# Every *console.log written while it ran, not seen before, is its.
		while IFS= read -r log; do
			case "$scanned$consoles" in *" $log "*) continue ;; esac
			consoles="$consoles $log "
			failed "[host $name] wrote console log $(basename "$log"), not listed for it in tests/lib/host-consoles"
		done < <(find "$out" -maxdepth 1 -name '*console.log' -newer "$tstamp" | sort)
	done
	while read -r name _; do
		case $name in ''|'#'*) continue ;; esac
		[ -f "$top/tests/host/$name.sh" ] ||
			failed "[host $name] tests/lib/host-consoles lists the console logs of tests/host/$name.sh, which does not exist"
	done < "$consoles_list"
fi

# Every other console log this run wrote (the host tests' boots, and any
# *console.log in OUT written since the run started): the kernel error
# scan. A log a test makes bad on purpose goes under OUT/harness/.
while IFS= read -r log; do
	case "$scanned" in *" $log "*) continue ;; esac
	tally "$(basename "$log" .log)" "$log" < <("$parse" console "$(basename "$log" .log)" "$log")
done < <({
	# shellcheck disable=SC2086 # one word per log
	[ -n "$consoles" ] && printf '%s\n' $consoles
	find "$out" -maxdepth 1 -name '*console.log' -newer "$stamp"
} | sort -u)

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
