#!/bin/bash
# make bench: boot the perf kernel once and run pfbench in it, then report
# faults/s per configuration, ratios measured in that same boot, a table,
# JSON and a PNG plot.
#
#   bench/run.sh -k ARTIFACT_DIR -i INITRAMFS [-c CPUS] [-m MB] [-s SECS]
#                [-r REPS] [-t N:N:..] -o OUTDIR
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/common.sh
. "$top/scripts/common.sh"
art= initrd= cpus=$(nproc) mem=3072 secs=1 reps=3 threads= out=$top/build/bench
while getopts "k:i:c:m:s:r:t:o:" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; c) cpus=$OPTARG ;; m) mem=$OPTARG ;;
	s) secs=$OPTARG ;; r) reps=$OPTARG ;; t) threads=$OPTARG ;; o) out=$OPTARG ;;
	*) sed -n '2,8s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
[ -f "$art/bzImage" ] || die "no perf kernel in '$art'"
mkdir -p "$out"
log=$out/bench-console.log
note "pfbench: ${secs}s x $reps reps per configuration on $cpus vCPUs (console: $log)"
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c "$cpus" -m "$mem" -t 5400 \
	-r bench -a "pfscale.bench=$secs,$reps${threads:+,$threads}" -l "$log" 2> >(tee "$out/boot.err" >&2) ||
	die "the benchmark boot failed (see $log)"
grep -q '^BENCH ' "$log" || die "no BENCH lines in $log"
accel=$(sed -n 's/.*pfscale: qemu (\([a-z]*\),.*/\1/p' "$out/boot.err" | head -1)
/usr/bin/python3 "$top/bench/report.py" --log "$log" --out "$out" \
	--accel "${accel:-unknown}" --kernel "$art"
