#!/bin/bash
# pfbench's same_region split: each worker takes whole runs of 8 pages (a
# line of PTEs) in turn, 64 runs per 2 MiB chunk, so with 3 workers their
# shares differ (22, 21, 21 runs). Run natively on the host (a plain
# program; without the debugfs switches it runs one configuration): every
# page of the region must be written once per pass, and the balance, worked
# out in each worker's own share, must lie in (0, 1]. Then pfbench's
# verdicts: one verdict record per run, used exactly when balanced and at full
# speed (its header's thresholds), and a rate that is the slowest worker's
# faults per second in the windows, so near faults / workers / seconds.
#
#   tests/host/pfbench.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=$top/build/guest/pfbench
passes=2 pages=$((128 * 1024 * 1024 / 4096))
echo "1..7"
records=$(mktemp)
trap 'rm -f "$records"' EXIT
"$bench" -b same_region -t 2,3 -p "$passes" -r 2 -B 0 >"$records" 2>&1
echo "# pfbench exit $?"
exec python3 - "$top/bench" "$records" "$passes" "$pages" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
import records  # noqa: E402  (bench/records.py, the records' one reader)

path, passes, pages = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def result(ok, text, detail):
    print('%s - %s (%s)' % ('ok' if ok else 'not ok', text, detail))


try:
    recs = records.pfbench_records(path)
except ValueError as e:
    recs = []
    print('# %s' % e)
header = next((r for r in recs if r['record'] == 'header'), {})
runs = [r for r in recs if r['record'] == 'run']
verdicts = [r for r in recs if r['record'] == 'verdict']
out = open(path, errors='replace').read()[-600:].replace('\n', ' ')
for t in (2, 3):
    first = next((r for r in runs if r['threads'] == t), {})
    got = first.get('faults')
    result(got == passes * pages,
           'pfbench same_region, %d workers: every page written once per '
           'pass' % t, '%s faults in %d passes, want %d%s' % (
               got, passes, passes * pages, '' if got else '; ' + out))
    # each window's progress is counted from where the chunk began: a
    # miscounted start gives 0 or less (or nothing) for some worker
    # (the first run at each thread count; -r 2 runs at least two)
    bal = first.get('balance')
    result(isinstance(bal, float) and 0 < bal <= 1,
           'pfbench same_region, %d workers: balance in (0, 1]' % t, bal)
by_run = {records.run_key(r): r for r in runs}
joined = [(by_run.get(records.run_key(v)), v) for v in verdicts]
matched = [(r, v) for r, v in joined if r]
result(len(runs) >= 4 and len(matched) == len(runs) == len(verdicts) and
       len({records.run_key(v) for v in verdicts}) == len(verdicts),
       'pfbench verdicts: one verdict record per run',
       '%d runs, %d verdicts, %d matched' % (len(runs), len(verdicts),
                                             len(matched)))
min_balance, full_speed = header.get('min_balance'), header.get('full_speed')
wrong = [v for r, v in matched if min_balance is not None and
         full_speed is not None and v['used'] !=
         (r['balance'] >= min_balance and v['speed'] >= full_speed)]
result(min_balance is not None and full_speed is not None and
       len(matched) >= 4 and not wrong,
       'pfbench verdicts: used exactly when balance >= %s and speed >= %s'
       % (min_balance, full_speed), 'wrong: %s' % wrong[:3])
# the rate: the slowest worker's faults per second, near an even share
wrong = [(r, v) for r, v in matched if not
         0.5 < v['rate'] / (r['faults'] / r['threads'] / r['secs']) < 2]
result(len(matched) >= 4 and not wrong,
       "pfbench verdicts: each run's rate is near faults / workers / seconds",
       'wrong: %s' % wrong[:2])
PY
