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
# every race window widened, PFSCALE_RACE_WINDOW_US, default 50 us; needs
# CONFIG_PFSCALE_RACE_WINDOWS), unpatched (the same tests on
# PFSCALE_STOCK_ART, the pristine 6.1 build of the test config: the
# baseline, where the checks that need pfscale skip by
# tests/expected-skips), none (no guest boot, the host tests only).
# Default: stock,atomic,widened, and unpatched if PFSCALE_STOCK_ART is set
# (make test sets it).
# -O: boot without oops=panic (qemu/boot.sh -O).
#
# What fails (tests/lib/tap-parse.sh is the parser, tests/lib/kernel-errors
# the kernel error patterns, tests/expected-skips the skips that may pass):
# a "not ok" line; a skip not in the allowlist; a program (guest or host)
# that prints no plan or a count of results other than its plan, exits
# non-zero or dies by a signal, or never runs; a guest that times out,
# panics or does not reach its done marker; a kernel error pattern in any
# console log written during the run (the guest boots' and the host tests').
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
parse=$top/tests/lib/tap-parse.sh
art= initrd= cpus=4 mem=1024 out=build/test soak= guest_only= runlist=tests
paths=stock,atomic,widened${PFSCALE_STOCK_ART:+,unpatched} nooops=
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

# tally: count the parser's PASS/FAIL/SKIP lines on stdin, echo them all.
tally() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"PASS  "*) pass=$((pass + 1)) ;;
		"FAIL  "*) fail=$((fail + 1)) ;;
		"SKIP  "*) skip=$((skip + 1)) ;;
		esac
		printf '%s\n' "$line"
	done
}

# The guest programs that must run: every tests/guest/t_*.c and every t_*
# the initramfs has (a test missing from the initramfs never ran).
expected_programs() {
	case $runlist in
	tests|soak|widened)
		{
			cpio -it --quiet < "$initrd" 2>/dev/null |
				sed -n 's|^pfscale/bin/\(t_[^/]*\)$|\1|p'
			for c in "$top"/tests/guest/t_*.c; do basename "$c" .c; done
		} | sort -u | tr '\n' ' '
		[ "$runlist" = tests ] && echo vmselftests
		[ "$runlist" = widened ] && echo race_windows
		;;
	esac
}

# boot_guest NAME ARTIFACT [kernel args]: one guest boot, its log through
# the parser.
boot_guest() {
	local name=$1 kart=$2 append=${3:-} log=$out/$1-console.log rc
	# shellcheck disable=SC2086 # $nooops: empty or -O
	"$top/qemu/boot.sh" -q -k "$kart/bzImage" -i "$initrd" -c "$cpus" -m "$mem" $nooops \
		-t "${PFSCALE_TEST_TIMEOUT:-1200}" -r "$runlist" -a "$append" -l "$log"
	rc=$?
	# shellcheck disable=SC2046 # one word per program
	tally < <("$parse" guest "$name" "$log" "$rc" $(expected_programs))
	scanned="$scanned$log "
}

# Every guest test runs on both fault paths, in two boots of one kernel,
# and on the unpatched kernel.
for path in ${paths//,/ }; do
	case $path in
	stock) boot_guest stock "$art" "$soakargs" ;;
	atomic)
		if grep -qx 'CONFIG_PFSCALE_ATOMIC_PTE=y' "$art/.config"; then
			boot_guest atomic "$art" "pfscale.atomic_pte=1 $soakargs"
		else
			tally < <("$parse" skip atomic "guest tests on the atomic path (kernel built without CONFIG_PFSCALE_ATOMIC_PTE)")
		fi
		;;
	widened)
		if [ -n "$soak" ]; then
			:	# soak loops the plain boots only
		elif grep -qx 'CONFIG_PFSCALE_RACE_WINDOWS=y' "$art/.config"; then
			saved=$runlist
			[ "$runlist" = tests ] && runlist=widened
			boot_guest widened "$art" "pfscale.atomic_pte=1 pfscale.race_window_us=${PFSCALE_RACE_WINDOW_US:-50}"
			runlist=$saved
		else
			tally < <("$parse" skip widened "race tests with widened race windows (kernel built without CONFIG_PFSCALE_RACE_WINDOWS)")
		fi
		;;
	unpatched)
		if [ -f "${PFSCALE_STOCK_ART:-}/bzImage" ]; then
			boot_guest unpatched "$PFSCALE_STOCK_ART" "$soakargs"
		else
			tally < <("$parse" skip unpatched "guest tests on the unpatched kernel (no PFSCALE_STOCK_ART/bzImage: '${PFSCALE_STOCK_ART:-}')")
		fi
		;;
	none) ;;
	*) echo "tests/run.sh: unknown path '$path'" >&2; exit 2 ;;
	esac
done

# Host-side tests: each tests/host/*.sh prints a plan and TAP lines like a
# guest program; its exit status counts too.
if [ -z "$soak$guest_only" ]; then
	for t in "$top"/tests/host/*.sh; do
		[ -x "$t" ] || continue
		name=$(basename "$t" .sh)
		PFSCALE_ART=$art PFSCALE_INITRD=$initrd PFSCALE_OUT=$out "$t" \
			> "$out/host-$name.out" 2>&1 < /dev/null
		tally < <("$parse" host "host $name" "$out/host-$name.out" $?)
	done
fi

# Every other console log this run wrote (the host tests' boots): the
# kernel error scan. A log a test means to be bad is not *console.log.
while IFS= read -r log; do
	case "$scanned" in *" $log "*) continue ;; esac
	tally < <("$parse" console "$(basename "$log" .log)" "$log")
done < <(find "$out" -maxdepth 1 -name '*console.log' -newer "$stamp" | sort)

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
