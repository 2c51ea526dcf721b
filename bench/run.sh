#!/bin/bash
# make bench: boot the perf kernel once and run pfbench in it, then report
# faults/s per configuration, ratios measured in that same boot, a table,
# JSON and a PNG plot. Under the pfcost plugin (unless -C 0): instructions
# and cache-line transfers per fault for every run, and with -u a second
# boot, of the unpatched perf kernel, for the floor.
#
#   bench/run.sh -k ARTIFACT_DIR -i INITRAMFS [-c CPUS] [-m MB] [-s SECS]
#                [-r REPS] [-t N:N:..] [-p PASSES] [-b NAME:NAME..] [-C 0|1]
#                [-u UNPATCHED_ARTIFACT_DIR] [-T HOST_TSC_KHZ_TOOL] -o OUTDIR
#
# -b: only these benchmarks (default all: page_fault1..3, same_region).
#
# -T: qemu/host-tsc-khz, built: the guests are told the host's TSC rate
# (tsc_early_khz=, tsc=reliable) and keep time with the TSC, so the perf
# kernel's NO_HZ_IDLE can stop the idle vCPU's tick.
#
# -p PASSES: each run makes PASSES passes over its region(s) instead of
# running SECS seconds (fixed work: per-fault counts that do not depend on
# the guest's speed).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/common.sh
. "$top/scripts/common.sh"
art= initrd= cpus=$(nproc) mem=3072 secs=1 reps=3 threads= out=$top/build/bench cost=1 floor= passes=
benches= tsc_tool=
while getopts "k:i:c:m:s:r:t:o:C:u:p:b:T:" o; do
	case $o in
	k) art=$OPTARG ;; i) initrd=$OPTARG ;; c) cpus=$OPTARG ;; m) mem=$OPTARG ;;
	s) secs=$OPTARG ;; r) reps=$OPTARG ;; t) threads=$OPTARG ;; o) out=$OPTARG ;;
	C) cost=$OPTARG ;; u) floor=$OPTARG ;; p) passes=$OPTARG ;; b) benches=$OPTARG ;;
	T) tsc_tool=$OPTARG ;;
	*) sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
[ -f "$art/bzImage" ] || die "no perf kernel in '$art'"
case $cost in 0|1) ;; *) die "bad -C '$cost' (0 or 1)" ;; esac
case $passes in '') ;; *[!0-9]*|0*) die "bad -p '$passes' (1 or more passes)" ;; esac
[ -z "$floor" ] || [ -f "$floor/bzImage" ] || die "no unpatched perf kernel in '$floor'"
mkdir -p "$out"
# Under TCG the guest's TSC is the host's: told its rate, the guest need not
# calibrate it against the emulated PIT (which often fails under TCG and
# leaves it jiffies as clocksource and a tick on every idle vCPU).
clock=
if [ -n "$tsc_tool" ]; then
	khz=$("$tsc_tool") || die "cannot measure the host's TSC rate with $tsc_tool (no constant_tsc?)"
	clock="tsc_early_khz=$khz tsc=reliable"
fi
# vCPUs 1.. out of the scheduler's domains (isolcpus=domain): the workers
# are pinned anyway, and an idle vCPU then takes no idle-balancing kicks
# from the busy ones. Those wake-ups, and the timekeeping and balancing it
# did once awake, were all the lines a 1-thread run moved (0.02-0.08 per
# fault, at a rate per host second, not per fault; 0.00-0.01 isolated).
isolate=
[ "$cpus" -gt 1 ] && isolate="isolcpus=domain,1-$((cpus - 1))"
args="$clock${isolate:+ $isolate}"
log=$out/bench-console.log
rm -f "$out/pfcost.jsonl" "$out/pfcost-unpatched.jsonl" "$out/bench-unpatched-console.log" \
	"$out/pfbench.jsonl" "$out/pfbench-unpatched.jsonl"

# bench_boot ARTIFACT LOG REPORT RECORDS: pfbench in one boot, under the
# plugin when REPORT is not empty; pfbench's records (JSON lines on the
# console, bench/records.py) into RECORDS.
bench_boot() {
	local kart=$1 blog=$2 report=$3 records=$4
	"$top/qemu/boot.sh" -q -k "$kart/bzImage" -i "$initrd" -c "$cpus" -m "$mem" -t 5400 \
		${report:+-P "$report"} -r bench \
		-a "pfscale.bench=$secs,$reps,$threads,$passes,$benches${args:+ $args}" \
		-l "$blog" 2> >(tee "$out/boot.err" >&2) ||
		die "the benchmark boot failed (see $blog)"
	/usr/bin/python3 "$top/bench/records.py" "$blog" > "$records" ||
		die "no pfbench run records in $blog"
	[ -z "$clock" ] || grep -Eq 'clocksource: Switched to clocksource tsc[[:space:]]*$' "$blog" ||
		die "the guest did not switch to the TSC ($clock; see $blog)"
	! grep -q 'Unknown kernel command line parameters.*isolcpus' "$blog" ||
		die "the perf kernel does not know isolcpus= (CONFIG_CPU_ISOLATION; see $blog)"
}

report=
[ "$cost" = 1 ] && report=$out/pfcost.jsonl
what="${secs}s"
[ -n "$passes" ] && what="$passes passes"
note "pfbench: $what x $reps reps per configuration on $cpus vCPUs (console: $log${report:+, pfcost plugin: $report}); host load now: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_boot "$art" "$log" "$report" "$out/pfbench.jsonl"
accel=$(sed -n 's/.*pfscale: qemu (\([a-z]*\),.*/\1/p' "$out/boot.err" | head -1)
floor_args=()
if [ -n "$floor" ]; then
	flog=$out/bench-unpatched-console.log
	freport=
	[ "$cost" = 1 ] && freport=$out/pfcost-unpatched.jsonl
	note "pfbench on the unpatched perf kernel (console: $flog); host load now: $(cut -d' ' -f1-3 /proc/loadavg)"
	bench_boot "$floor" "$flog" "$freport" "$out/pfbench-unpatched.jsonl"
	[ -n "$freport" ] && floor_args=(--floor-log "$out/pfbench-unpatched.jsonl" --floor-cost "$freport")
fi
note "host load after the boots: $(cut -d' ' -f1-3 /proc/loadavg)"
# The previous run's results, to show how well this one repeats them.
compare_args=()
if [ -n "$report" ] && [ -f "$out/bench.json" ]; then
	mv "$out/bench.json" "$out/bench-prev.json"
	compare_args=(--compare "$out/bench-prev.json")
fi
/usr/bin/python3 "$top/bench/report.py" --log "$out/pfbench.jsonl" --out "$out" \
	--accel "${accel:-unknown}" --kernel "$art" ${report:+--cost "$report"} "${floor_args[@]}" \
	"${compare_args[@]}"
