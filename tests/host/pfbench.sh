#!/bin/bash
# pfbench's same_region split: each worker takes whole runs of 8 pages (a
# line of PTEs) in turn, 64 runs per 2 MiB chunk, so with 3 workers their
# shares differ (22, 21, 21 runs). Run natively on the host (a plain
# program; without the debugfs switches it runs one configuration): every
# page of the region must be written once per pass, and the balance, worked
# out in each worker's own share, must lie in (0, 1].
#
#   tests/host/pfbench.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=$top/build/guest/pfbench
passes=2 pages=$((128 * 1024 * 1024 / 4096))
echo "1..4"
out=$("$bench" -b same_region -t 2,3 -p "$passes" -r 1 -B 0 2>&1)
rc=$?
lines=$(echo "$out" | grep '^BENCH ')
# BENCH name threads atomic counters rep faults secs interval balance
for t in 2 3; do
	got=$(echo "$lines" | awk -v t="$t" '$3 == t { print $7; exit }')
	if [ "$got" = $((passes * pages)) ]; then
		echo "ok - pfbench same_region, $t workers: every page written once per pass ($got faults in $passes passes)"
	else
		echo "not ok - pfbench same_region, $t workers: every page written once per pass (got '$got' faults, want $((passes * pages)); pfbench exit $rc: $(echo $out))"
	fi
	# each window's progress is counted from where the chunk began: a
	# miscounted start gives 0 or less (or nothing) for some worker
	bal=$(echo "$lines" | awk -v t="$t" '$3 == t { print $10; exit }')
	if awk -v b="$bal" 'BEGIN { exit !(b ~ /^[0-9.]+$/ && b > 0 && b <= 1) }'; then
		echo "ok - pfbench same_region, $t workers: balance in (0, 1] ($bal)"
	else
		echo "not ok - pfbench same_region, $t workers: balance in (0, 1] (got '$bal')"
	fi
done
