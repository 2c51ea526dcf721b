#!/usr/bin/python3
"""Summarise pfbench BENCH lines from one boot: faults/s per configuration
(median and spread over repetitions), same-boot ratios atomic/stock and
counters on/off, as a table, bench.json and bench.png (gnuplot)."""
import argparse
import json
import os
import statistics
import subprocess
import sys


def parse(log):
    """{(bench, threads, atomic, counters): {rep: faults/s}}"""
    runs = {}
    with open(log, errors='replace') as f:
        for line in f:
            line = line.strip().replace('\r', '')
            if not line.startswith('BENCH '):
                continue
            # an 8th field, the pfcost interval, came with the plugin
            _, name, threads, atomic, counters, rep, faults, secs = \
                line.split()[:8]
            key = (name, int(threads), int(atomic), int(counters))
            runs.setdefault(key, {})[int(rep)] = int(faults) / float(secs)
    return runs


def summary(rates):
    med = statistics.median(rates)
    spread = (max(rates) - min(rates)) / med if med else 0.0
    return {'median': med, 'min': min(rates), 'max': max(rates),
            'spread': spread, 'reps': len(rates), 'runs': rates}


def ratio(runs, num, den):
    """Paired ratios: each repetition's num over the same repetition's den
    (run back to back in the same boot), as median, min and max."""
    if num not in runs or den not in runs:
        return None
    pairs = [runs[num][r] / runs[den][r] for r in runs[num]
             if r in runs[den] and runs[den][r]]
    if not pairs:
        return None
    return {'median': statistics.median(pairs), 'min': min(pairs),
            'max': max(pairs), 'pairs': pairs}


def fmt_ratio(r):
    return '-' if r is None else '%.2f [%.2f-%.2f]' % (
        r['median'], r['min'], r['max'])


def plot(out, benches, threads, runs):
    dat = os.path.join(out, 'bench.dat')
    configs = [(0, 1, 'stock'), (1, 1, 'atomic'),
               (0, 0, 'stock, counters off'), (1, 0, 'atomic, counters off')]
    with open(dat, 'w') as f:
        for b in benches:
            f.write('# %s\n' % b)
            for t in threads:
                row = [str(t)]
                for a, c, _ in configs:
                    r = runs.get((b, t, a, c))
                    row.append('%.1f' % statistics.median(r.values())
                               if r else 'NaN')
                f.write(' '.join(row) + '\n')
            f.write('\n\n')
    png = os.path.join(out, 'bench.png')
    lines = ['set terminal pngcairo size 1200,900 noenhanced',
             "set output '%s'" % png,
             'set multiplot layout 2,2 title "pfscale page-fault scaling '
             '(faults/s, median of repetitions, one boot)"',
             'set xlabel "threads"', 'set ylabel "faults/s"',
             'set key top left', 'set grid',
             'set xtics (%s)' % ', '.join(str(t) for t in threads)]
    for i, b in enumerate(benches):
        lines.append('set title "%s"' % b)
        parts = ["'%s' index %d using 1:%d with linespoints title '%s'"
                 % (dat, i, j + 2, c[2]) for j, c in enumerate(configs)]
        lines.append('plot ' + ', '.join(parts))
    lines.append('unset multiplot')
    try:
        subprocess.run(['gnuplot'], input='\n'.join(lines), text=True,
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('pfscale: gnuplot failed: %s' % e, file=sys.stderr)
        return None
    return png


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--log', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--accel', default='unknown')
    ap.add_argument('--kernel', default='')
    ap.add_argument('--json', action='store_true',
                    help='print the JSON instead of the table')
    args = ap.parse_args()
    runs = parse(args.log)
    if not runs:
        sys.exit('pfscale: no BENCH lines in %s' % args.log)
    benches = sorted({k[0] for k in runs},
                     key=lambda b: ['page_fault1', 'page_fault2',
                                    'page_fault3', 'same_region'].index(b)
                     if b in ('page_fault1', 'page_fault2', 'page_fault3',
                              'same_region') else 9)
    threads = sorted({k[1] for k in runs})
    result = {'accel': args.accel, 'kernel': args.kernel, 'results': []}
    table = ['%-12s %3s  %10s %6s  %10s %6s  %-17s %-17s %-17s' %
             ('benchmark', 'thr', 'stock f/s', 'spread', 'atomic f/s',
              'spread', 'atomic/stock', 'counters on/off', 'cnt on/off atomic')]
    for b in benches:
        for t in threads:
            entry = {'benchmark': b, 'threads': t, 'configs': {}}
            for (bb, tt, a, c), rates in sorted(runs.items()):
                if bb == b and tt == t:
                    name = '%s,counters_%s' % ('atomic' if a else 'stock',
                                               'on' if c else 'off')
                    entry['configs'][name] = summary(list(rates.values()))
            entry['ratio_atomic_over_stock'] = ratio(runs, (b, t, 1, 1),
                                                     (b, t, 0, 1))
            entry['ratio_counters_on_over_off_stock'] = ratio(
                runs, (b, t, 0, 1), (b, t, 0, 0))
            entry['ratio_counters_on_over_off_atomic'] = ratio(
                runs, (b, t, 1, 1), (b, t, 1, 0))
            result['results'].append(entry)
            s = entry['configs'].get('stock,counters_on')
            a = entry['configs'].get('atomic,counters_on')
            table.append('%-12s %3d  %10.0f %5.1f%%  %10s %6s  %-17s %-17s %-17s' % (
                b, t, s['median'] if s else 0, 100 * s['spread'] if s else 0,
                '%.0f' % a['median'] if a else '-',
                '%.1f%%' % (100 * a['spread']) if a else '-',
                fmt_ratio(entry['ratio_atomic_over_stock']),
                fmt_ratio(entry['ratio_counters_on_over_off_stock']),
                fmt_ratio(entry['ratio_counters_on_over_off_atomic'])))
    os.makedirs(args.out, exist_ok=True)
    png = plot(args.out, benches, threads, runs)
    result['png'] = png
    with open(os.path.join(args.out, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, 'bench.txt'), 'w') as f:
        f.write('\n'.join(table) + '\n')
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print('pfscale bench (%s, %s): faults/s, median of repetitions; '
          'ratios from the same boot' % (args.accel, os.path.basename(
              args.kernel.rstrip('/')) or 'kernel'))
    print('\n'.join(table))
    print('f/s: median faults/s; spread: (max-min)/median over repetitions. '
          'Ratios: median [min-max] of per-repetition pairs run back to back '
          'in this boot; atomic/stock with counters on; counters on/off on '
          'each path.')
    print('table: %s  json: %s  plot: %s' % (
        os.path.join(args.out, 'bench.txt'),
        os.path.join(args.out, 'bench.json'), png or '(gnuplot failed)'))


if __name__ == '__main__':
    main()
