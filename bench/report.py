#!/usr/bin/python3
"""make bench's report on one boot's pfbench records: faults/s per
configuration (median and spread over repetitions), same-boot ratios
atomic/stock and counters on/off, as a table, bench.json and bench.png.

With --cost (the pfcost plugin's records of that boot, one per run, named
by the run record's interval): instructions and cache-line transfers per
fault per configuration, their spread, the same ratios on them, and the
top functions and data by transfers; bench-cost.txt and cost.png. With
--floor-log/--floor-cost (a boot of the unpatched perf kernel): the
unpatched kernel as one more configuration, and patched-with-counters-off
over unpatched. With --compare (an earlier bench.json): the
repeatability check.

The records are read once (bench/records.py), the figures come from
bench/stats.py, the comparison from bench/compare.py, the text and plots
from bench/render.py; what it all means is in docs/bench.md."""
import argparse
import json
import os
import statistics
import sys

import compare
import records
import render
import stats

BENCH_ORDER = ('page_fault1', 'page_fault2', 'page_fault3', 'same_region')
# The configurations with plugin records: ((atomic, counters), name).
CONFIGS = [((0, 0), 'stock,counters_off'), ((0, 1), 'stock,counters_on'),
           ((1, 0), 'atomic,counters_off'), ((1, 1), 'atomic,counters_on')]


def config_name(atomic, counters):
    """A configuration's name in bench.json: 'stock,counters_on', ..."""
    return '%s,counters_%s' % ('atomic' if atomic else 'stock',
                               'on' if counters else 'off')


def benches_and_threads(runs):
    """The benchmarks of @runs in BENCH_ORDER (others last), and the
    thread counts, sorted."""
    benches = sorted({k[0] for k in runs},
                     key=lambda b: BENCH_ORDER.index(b)
                     if b in BENCH_ORDER else 9)
    return benches, sorted({k[1] for k in runs})


def wall_entry(runs, b, t):
    """bench.json's entry for benchmark @b at @t threads: faults/s per
    configuration and the paired ratios of @runs (stats.wall_rates())."""
    entry = {'benchmark': b, 'threads': t, 'configs': {}}
    for (bb, tt, a, c), rates in sorted(runs.items()):
        if bb == b and tt == t:
            entry['configs'][config_name(a, c)] = stats.summary(
                list(rates.values()))
    entry['ratio_atomic_over_stock'] = stats.ratio(runs, (b, t, 1, 1),
                                                   (b, t, 0, 1))
    entry['ratio_counters_on_over_off_stock'] = stats.ratio(
        runs, (b, t, 0, 1), (b, t, 0, 0))
    entry['ratio_counters_on_over_off_atomic'] = stats.ratio(
        runs, (b, t, 1, 1), (b, t, 1, 0))
    return entry


def cost_configs(cost, benches, threads):
    """The configurations that have plugin records, the floor last."""
    configs = [(k, n) for k, n in CONFIGS
               if any((b, t) + k in cost for b in benches for t in threads)]
    if any((b, t, 'unpatched') in cost for b in benches for t in threads):
        configs.append((('unpatched',), 'unpatched'))
    return configs


def cost_entry(reps, header_reps):
    """A configuration's per-fault figures and top sites over its
    repetitions @reps; short_of_reps: fewer runs used than pfbench's REPS
    (@header_reps), after its 3 x REPS runs."""
    sm = stats.cost_summary(reps)
    return {'per_fault': sm,
            'top_transfer_funcs': stats.top_sites(reps, 'top_transfers',
                                                  'func'),
            'top_transfer_data': stats.top_sites(reps, 'top_data', 'sym'),
            'top_insn_funcs': stats.top_sites(reps, 'top_insns', 'func'),
            'transfer_classes': stats.class_shares(reps),
            'hot_lines': stats.hot_lines(reps),
            'records': sorted(r['seq'] for _, r in reps.values()),
            'short_of_reps': bool(header_reps) and
            sm['used_runs'] < header_reps}


def cost_ratios(cost, b, t):
    """The per-fault ratios of benchmark @b at @t threads: back-to-back
    pairs, and stock with the counters off over the floor (unpaired)."""
    pair, unpaired = stats.cost_ratio, stats.cost_ratio_unpaired
    return {
        'insns_atomic_over_stock': pair(
            cost, (b, t, 1, 1), (b, t, 0, 1), 'insns'),
        'transfers_atomic_over_stock': pair(
            cost, (b, t, 1, 1), (b, t, 0, 1), 'transfers'),
        'insns_counters_on_over_off_stock': pair(
            cost, (b, t, 0, 1), (b, t, 0, 0), 'insns'),
        'transfers_counters_on_over_off_stock': pair(
            cost, (b, t, 0, 1), (b, t, 0, 0), 'transfers'),
        'insns_counters_on_over_off_atomic': pair(
            cost, (b, t, 1, 1), (b, t, 1, 0), 'insns'),
        'insns_counters_off_over_unpatched': unpaired(
            cost, (b, t, 0, 0), (b, t, 'unpatched'), 'insns'),
        'transfers_counters_off_over_unpatched': unpaired(
            cost, (b, t, 0, 0), (b, t, 'unpatched'), 'transfers'),
    }


def cost_medians(cost, benches, threads, configs):
    """{(metric, bench, threads, config key): median} for cost.png."""
    out = {}
    for metric in ('insns', 'transfers'):
        for b in benches:
            for t in threads:
                for key, _ in configs:
                    r = cost.get((b, t) + key)
                    if r:
                        out[(metric, b, t) + key] = statistics.median(
                            stats.metric_values(r, metric)[0])
    return out


def read_pfcost(path):
    """The plugin's records at @path (records.read_pfcost()), saying on
    stderr if its address map did not fit the guest."""
    recs = records.read_pfcost(path)
    misses = records.layout_misses(recs)
    if misses:
        print('pfscale: %s: the pfcost plugin\'s address map did not fit '
              'the guest (%d transfers; qemu/pfcost-layout): the data '
              'classes are wrong' % (path, misses), file=sys.stderr)
    return recs


def read_cost(args, boot):
    """The runs with plugin records: this boot's and the floor's."""
    cost = stats.cost_runs(boot, read_pfcost(args.cost))
    if args.floor_log and args.floor_cost:
        cost.update(stats.cost_runs(records.read_pfbench(args.floor_log),
                                    read_pfcost(args.floor_cost),
                                    tag='unpatched'))
    return cost


def cost_report(args, boot, benches, threads, result):
    """Adds the per-fault figures to @result's entries and writes
    bench-cost.txt and cost.png; its text, or None without records."""
    result.update(boot['header'])
    cost = read_cost(args, boot)
    if not cost:
        print('pfscale: no pfcost records match the run records of %s'
              % args.log, file=sys.stderr)
        return None
    configs = cost_configs(cost, benches, threads)
    for entry in result['results']:
        b, t = entry['benchmark'], entry['threads']
        entry['cost'] = {}
        for key, name in configs:
            reps = cost.get((b, t) + key)
            if reps:
                entry['cost'][name] = cost_entry(reps, result['reps'])
        entry['cost_ratios'] = cost_ratios(cost, b, t)
    result['cost_png'] = render.plot_cost(
        args.out, benches, threads,
        cost_medians(cost, benches, threads, configs), configs)
    text = render.cost_table(result) + [''] + render.ratio_table(result) + \
        [''] + render.site_lines(result, threads)
    write_lines(os.path.join(args.out, 'bench-cost.txt'), text)
    return text


def compare_report(args, result, cost_text):
    """Adds the comparison with the earlier run (--compare) to @result
    and to @cost_text, and rewrites bench-cost.txt."""
    try:
        with open(args.compare) as f:
            prev = json.load(f)
    except (OSError, ValueError) as e:
        lines, result['repeatability'] = [
            '(no earlier run to compare with: %s)' % e], None
    else:
        cmp = compare.compare(result, prev)
        lines = render.compare_lines(cmp, args.compare, compare.REPEAT_WITHIN,
                                     compare.ABOUT_ZERO)
        result['repeatability'] = cmp['summary']
    cost_text += ['', 'Against the earlier run (median per fault; '
                  'dev: |this/earlier - 1|)'] + lines
    write_lines(os.path.join(args.out, 'bench-cost.txt'), cost_text)


def write_lines(path, lines):
    """@lines to the file at @path, a newline after each."""
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def parse_args():
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--log', required=True,
                    help="pfbench's records: the boot's console log, or "
                    'the records alone')
    ap.add_argument('--out', required=True)
    ap.add_argument('--accel', default='unknown')
    ap.add_argument('--kernel', default='')
    ap.add_argument('--cost', help="the pfcost plugin's records of the boot")
    ap.add_argument('--floor-log', help="pfbench's records of an unpatched "
                    'boot')
    ap.add_argument('--floor-cost', help='its pfcost records')
    ap.add_argument('--compare', help='an earlier bench.json: per-fault '
                    'medians against it (repeatability)')
    ap.add_argument('--json', action='store_true',
                    help='print the JSON instead of the table')
    return ap.parse_args()


def main():
    """Read, analyse, write bench.txt, bench-cost.txt, bench.json and
    the plots, and print the tables (or the JSON)."""
    args = parse_args()
    boot = records.read_pfbench(args.log)
    runs = stats.wall_rates(boot)
    if not runs:
        sys.exit('pfscale: no pfbench run records in %s' % args.log)
    benches, threads = benches_and_threads(runs)
    result = {'accel': args.accel, 'kernel': args.kernel,
              'results': [wall_entry(runs, b, t)
                          for b in benches for t in threads]}
    os.makedirs(args.out, exist_ok=True)
    png = render.plot(args.out, benches, threads, runs)
    result['png'] = png
    cost_text = None
    if args.cost:
        cost_text = cost_report(args, boot, benches, threads, result)
        if cost_text and args.compare:
            compare_report(args, result, cost_text)
    with open(os.path.join(args.out, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=1)
    table = render.wall_table(result)
    write_lines(os.path.join(args.out, 'bench.txt'), table)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    render.console(args, result, table, cost_text, png)


if __name__ == '__main__':
    main()
