#!/bin/bash
# pfbench's same_region split: each worker takes whole runs of 8 pages (a
# line of PTEs) in turn, 64 runs per 2 MiB chunk, so with 3 workers their
# shares differ (22, 21, 21 runs). Run natively on the host (a plain
# program; without the debugfs switches it runs one configuration): every
# page of the region must be written once per pass, and the balance, worked
# out in each worker's own share, must lie in (0, 1]. Then pfbench's
# verdicts: one USED line per run, used exactly when balanced and at full
# speed (its header's thresholds), and a rate that is the slowest worker's
# faults per second in the windows, so near faults / workers / seconds.
#
#   tests/host/pfbench.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=$top/build/guest/pfbench
passes=2 pages=$((128 * 1024 * 1024 / 4096))
echo "1..7"
out=$("$bench" -b same_region -t 2,3 -p "$passes" -r 2 -B 0 2>&1)
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
	# (the first run at each thread count; -r 2 runs at least two)
	if awk -v b="$bal" 'BEGIN { exit !(b ~ /^[0-9.]+$/ && b > 0 && b <= 1) }'; then
		echo "ok - pfbench same_region, $t workers: balance in (0, 1] ($bal)"
	else
		echo "not ok - pfbench same_region, $t workers: balance in (0, 1] (got '$bal')"
	fi
done

# USED name threads atomic counters rep rate speed used
verdicts=$(echo "$out" | grep '^USED ')
read -r min_balance full_speed < <(echo "$out" |
	sed -n 's/^# pfbench:.* balance \([0-9.]*\), full speed \([0-9.]*\)$/\1 \2/p')
joined=$(awk 'NR == FNR { bench[$2, $3, $4, $5, $6] = $0; next }
	      { k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5 SUBSEP $6
		if (k in bench) print bench[k], $0; else print "unmatched", $0
		delete bench[k] }
	      END { for (k in bench) print bench[k], "no-verdict" }' \
	<(echo "$lines") <(echo "$verdicts"))
runs=$(echo "$lines" | grep -c .)
matched=$(echo "$joined" | awk 'NF == 19' | grep -c .)
if [ "$runs" -ge 4 ] && [ "$matched" = "$runs" ] && [ "$(echo "$joined" | grep -c .)" = "$runs" ]; then
	echo "ok - pfbench verdicts: one USED line per run ($runs runs)"
else
	echo "not ok - pfbench verdicts: one USED line per run ($runs runs, $matched matched: $(echo $joined | head -c 600))"
fi
# fields once joined: 1-10 BENCH, 11-19 USED (17 rate, 18 speed, 19 used)
wrong=$(echo "$joined" | awk -v b="$min_balance" -v f="$full_speed" '
	NF == 19 && ($19 == 1) != ($10 >= b && $18 >= f) { print }')
if [ -n "$min_balance" ] && [ -n "$full_speed" ] && [ "$matched" -ge 4 ] && [ -z "$wrong" ]; then
	echo "ok - pfbench verdicts: used exactly when balance >= $min_balance and speed >= $full_speed"
else
	echo "not ok - pfbench verdicts: used exactly when balance >= '$min_balance' and speed >= '$full_speed' (wrong: $(echo $wrong | head -c 600))"
fi
wrong=$(echo "$joined" | awk 'NF == 19 {
	even = $7 / $3 / $8
	if (!($17 > 0.5 * even && $17 < 2 * even)) print }')
if [ "$matched" -ge 4 ] && [ -z "$wrong" ]; then
	echo "ok - pfbench verdicts: each run's rate is near faults / workers / seconds"
else
	echo "not ok - pfbench verdicts: each run's rate is near faults / workers / seconds (wrong: $(echo $wrong | head -c 600))"
fi
