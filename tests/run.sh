#!/bin/bash
# Host-side test runner: boot the test kernel, run the guest tests (TAP on
# the serial console), check the console for splats, run host-side tests,
# and print one summary whose last line is "N passed, N failed, N skipped".
#
#   tests/run.sh -k ARTIFACT_DIR -i INITRAMFS [-c CPUS] [-m MB] -o OUTDIR
#                [-s SECS] [-G]
#
# -G: guest tests only (no host-side tests), e.g. for the KASAN kernel.
# -s SECS: soak instead: loop the guest tests for SECS seconds on each path
# (guest/run/soak), no host-side tests.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
art= initrd= cpus=4 mem=1024 out=build/test soak= guest_only=
while getopts "k:i:c:m:o:s:G" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; c) cpus=$OPTARG ;; m) mem=$OPTARG ;;
	o) out=$OPTARG ;; s) soak=$OPTARG ;; G) guest_only=1 ;; *) exit 2 ;;
	esac
done
runlist=tests soakargs=
if [ -n "$soak" ]; then
	runlist=soak soakargs="pfscale.soak=$soak"
	export PFSCALE_TEST_TIMEOUT=$((soak + 900))
fi
mkdir -p "$out"
pass=0 fail=0 skip=0
result() {	# result ok|fail|skip NAME
	case $1 in
	ok) pass=$((pass + 1)); echo "PASS  $2" ;;
	skip) skip=$((skip + 1)); echo "SKIP  $2" ;;
	*) fail=$((fail + 1)); echo "FAIL  $2" ;;
	esac
}

# Kernel splats that fail the run, whatever the tests said.
splats='BUG:|WARNING:|Bad page state|Bad rss-counter|possible recursive locking|possible circular locking|inconsistent lock state|INFO: task .* blocked|Kernel panic|general protection fault|KASAN:|UBSAN:|Oops'

# boot_guest NAME RUNLIST [kernel args]: one guest boot, TAP results counted.
boot_guest() {
	local name=$1 runlist=$2 append=${3:-} log=$out/$1-console.log rc
	"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c "$cpus" -m "$mem" \
		-t "${PFSCALE_TEST_TIMEOUT:-1200}" -r "$runlist" -a "$append" -l "$log"
	rc=$?
	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok - "*"# SKIP"*) result skip "[$name] ${line#ok - }" ;;
		"ok - "*) result ok "[$name] ${line#ok - }" ;;
		"not ok - "*) result fail "[$name] ${line#not ok - }" ;;
		"# "*) echo "      $line" ;;
		esac
	done < <(tr -d '\r' < "$log")
	if [ $rc = 124 ]; then
		result fail "[$name] guest finished in time (timed out; see $log)"
	elif ! grep -q 'pfscale-guest: done' "$log"; then
		result fail "[$name] guest ran to the end (QEMU exit $rc; see $log)"
	else
		result ok "[$name] guest ran to the end"
	fi
	if grep -q "FATAL: expected $cpus CPUs" "$log"; then
		result fail "[$name] guest sees $cpus CPUs"
	fi
	if grep -Eq "$splats" "$log"; then
		# Name the guest test that was running when the first splat came.
		local during
		during=$(tr -d '\r' < "$log" | awk -v re="$splats" '
			/pfscale-guest: running / { t = $NF }
			$0 ~ re { print (t == "" ? "boot" : t); exit }')
		result fail "[$name] no kernel BUG/WARN/lockdep splat (during $during): $(grep -Em1 "$splats" "$log")"
	else
		result ok "[$name] no kernel BUG/WARN/lockdep splat in the console log"
	fi
}

# Every guest test runs on both fault paths, in two boots of one kernel.
boot_guest stock $runlist "$soakargs"
if grep -qx 'CONFIG_PFSCALE_ATOMIC_PTE=y' "$art/.config"; then
	boot_guest atomic $runlist "pfscale.atomic_pte=1 $soakargs"
else
	result skip "[atomic] guest tests on the atomic path (kernel built without CONFIG_PFSCALE_ATOMIC_PTE)"
fi

# Host-side tests: each tests/host/*.sh prints TAP lines like the guest.
for t in "$top"/tests/host/*.sh; do
	[ -x "$t" ] && [ -z "$soak$guest_only" ] || continue
	while IFS= read -r line; do
		case "$line" in
		"ok - "*"# SKIP"*) result skip "${line#ok - }" ;;
		"ok - "*) result ok "${line#ok - }" ;;
		"not ok - "*) result fail "${line#not ok - }" ;;
		*) echo "      $line" ;;
		esac
	done < <(PFSCALE_ART=$art PFSCALE_INITRD=$initrd PFSCALE_OUT=$out "$t" 2>&1)
done

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
