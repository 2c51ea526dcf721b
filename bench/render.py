"""make bench's report as text and plots, from the result bench/report.py
assembles (what bench.json holds): the faults/s table, the per-fault
table, the ratios, the top sites, the comparison with an earlier run,
and the gnuplot PNGs. What the columns mean is in docs/bench.md
("Reading the report"), not here."""
import os
import statistics
import subprocess
import sys

# The wall-clock plot's lines: (atomic, counters, title).
WALL_CONFIGS = [(0, 1, 'stock'), (1, 1, 'atomic'),
                (0, 0, 'stock, counters off'), (1, 0, 'atomic, counters off')]


def fmt_ratio(r):
    """A ratio summary as 'median [min-max]'; '-' for none."""
    return '-' if r is None else '%.2f [%.2f-%.2f]' % (
        r['median'], r['min'], r['max'])


def wall_table(result):
    """The faults/s table: a line per benchmark and thread count."""
    table = ['%-12s %3s  %10s %6s  %10s %6s  %-17s %-17s %-17s' %
             ('benchmark', 'thr', 'stock f/s', 'spread', 'atomic f/s',
              'spread', 'atomic/stock', 'counters on/off', 'cnt on/off atomic')]
    for entry in result['results']:
        s = entry['configs'].get('stock,counters_on')
        a = entry['configs'].get('atomic,counters_on')
        table.append('%-12s %3d  %10.0f %5.1f%%  %10s %6s  %-17s %-17s %-17s' % (
            entry['benchmark'], entry['threads'], s['median'] if s else 0,
            100 * s['spread'] if s else 0,
            '%.0f' % a['median'] if a else '-',
            '%.1f%%' % (100 * a['spread']) if a else '-',
            fmt_ratio(entry['ratio_atomic_over_stock']),
            fmt_ratio(entry['ratio_counters_on_over_off_stock']),
            fmt_ratio(entry['ratio_counters_on_over_off_atomic'])))
    return table


def cost_table(result):
    """The per-fault table: a line per benchmark, thread count and
    configuration with plugin records."""
    table = ['%-12s %3s  %-20s %9s %6s %9s %6s %6s %8s %8s  %s' % (
        'benchmark', 'thr', 'configuration', 'insn/f', 'spread', 'xfer/f',
        'spread', 'used', 'kern/f', 'spin/f',
        'top transfer sites (share of xfers)')]
    for entry in result['results']:
        for name, c in entry.get('cost', {}).items():
            sm = c['per_fault']
            sites = ', '.join('%s %.0f%%' % (f, 100 * v) for f, v in
                              c['top_transfer_funcs'][:3])
            table.append('%-12s %3d  %-20s %9.0f %5.1f%% %9.2f %5.1f%% '
                         '%6s %8.0f %8.0f  %s' % (
                             entry['benchmark'], entry['threads'], name,
                             sm['insns']['median'],
                             100 * sm['insns']['spread'],
                             sm['transfers']['median'],
                             100 * sm['transfers']['spread'],
                             '%d/%d%s' % (sm['used_runs'], len(c['records']),
                                          '*' if c['short_of_reps'] else ''),
                             sm['insns_kernel']['median'],
                             sm['insns_spin']['median'], sites))
    return table


def ratio_table(result):
    """The per-fault ratios: a line per benchmark and thread count."""
    lines = ['%-12s %3s  %-22s %-22s %-22s %-22s %-22s' % (
        'benchmark', 'thr', 'insn/f atomic/stock', 'xfer/f atomic/stock',
        'insn/f cnt on/off', 'xfer/f cnt on/off',
        'insn/f cntoff/unpatch')]
    for entry in result['results']:
        rs = entry['cost_ratios']
        lines.append('%-12s %3d  %-22s %-22s %-22s %-22s %-22s' % (
            entry['benchmark'], entry['threads'],
            fmt_ratio(rs['insns_atomic_over_stock']),
            fmt_ratio(rs['transfers_atomic_over_stock']),
            fmt_ratio(rs['insns_counters_on_over_off_stock']),
            fmt_ratio(rs['transfers_counters_on_over_off_stock']),
            fmt_ratio(rs['insns_counters_off_over_unpatched'])))
    return lines


def site_lines(result, threads):
    """The top sites at the most threads, a line per benchmark and
    configuration: functions, data classes, the hottest line."""
    sites = ['Top sites at %d threads, per configuration: functions by '
             'transfers; data classes; the hottest line' % max(threads)]
    for entry in result['results']:
        if entry['threads'] != max(threads):
            continue
        for name, c in entry.get('cost', {}).items():
            hot = c['hot_lines'][0] if c['hot_lines'] else None
            sites.append('%-12s %-20s %s | %s | %s' % (
                entry['benchmark'], name,
                ', '.join('%s %.0f%%' % (f, 100 * v)
                          for f, v in c['top_transfer_funcs']),
                ', '.join('%s %.0f%%' % (k, 100 * v) for k, v in
                          list(c['transfer_classes'].items())[:4]),
                '%s (first moved by %s) %.0f%%' % (
                    hot['what'], hot['first_func'], 100 * hot['share'])
                if hot else '-'))
    return sites


def deviation_rows(rows):
    """compare.per_fault_deviations()' rows as a table."""
    lines = ['%-12s %3s  %-20s %9s %9s %7s %9s %9s %7s' % (
        'benchmark', 'thr', 'configuration', 'insn/f', 'earlier', 'dev',
        'xfer/f', 'earlier', 'dev')]
    for row in rows:
        lines.append('%-12s %3d  %-20s %9.1f %9.1f %6.1f%% %9.3f %9.3f '
                     '%6.1f%%' % (row[0], row[1], row[2], row[3], row[4],
                                  100 * row[5], row[6], row[7],
                                  100 * row[8]))
    return lines


def compare_lines(cmp, prev_path, within, about_zero):
    """compare.compare()'s result @cmp against @prev_path in words: the
    table, the worst deviations, the ratios', and last the bar (@within,
    @about_zero: compare's REPEAT_WITHIN and ABOUT_ZERO)."""
    worst, rworst = cmp['worst'], cmp['ratios']
    lines = deviation_rows(cmp['rows'])
    lines.append('repeatability against %s: instructions/fault within '
                 '%.1f%% (worst: %s), transfers/fault at 2+ threads within '
                 '%.1f%% (worst: %s); transfers/fault at 1 '
                 'thread (the idle vCPU\'s work, not the faults\') within '
                 '%.1f%% (worst: %s), %.3f transfers/fault absolute '
                 '(worst: %s)' % (
                     prev_path, 100 * worst['insns'][0], worst['insns'][1],
                     100 * worst['transfers'][0], worst['transfers'][1],
                     100 * worst['transfers_1thread'][0],
                     worst['transfers_1thread'][1],
                     worst['transfers_1thread_abs'][0],
                     worst['transfers_1thread_abs'][1]))
    if rworst:
        lines.append('ratios of back-to-back pairs, 2+ threads, against the earlier run: ' +
                     ', '.join('%s within %.1f%% (worst: %s)' % (
                         n, 100 * d, w) for n, (d, w) in sorted(
                             rworst.items())))
    bar = cmp['summary']['bar']
    lines.append('the bar (instructions and transfers at 2+ threads within '
                 '%.0f%%; transfers at 1 thread about 0, under %.2f per fault '
                 'in both runs): %s' % (
                     100 * within, about_zero,
                     'met' if bar['met'] else
                     'missed: ' + '; '.join(bar['missed'])))
    return lines


def run_gnuplot(lines, png):
    """Run gnuplot on the script @lines; @png, or None if it failed."""
    try:
        subprocess.run(['gnuplot'], input='\n'.join(lines), text=True,
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('pfscale: gnuplot failed: %s' % e, file=sys.stderr)
        return None
    return png


def multiplot(png, size, layout, title):
    """The start of a gnuplot script: a @size PNG of @layout plots."""
    return ['set terminal pngcairo size %s noenhanced' % size,
            "set output '%s'" % png,
            'set multiplot layout %s title "%s"' % (layout, title),
            'set xlabel "threads"']


def plot(out, benches, threads, runs):
    """bench.png (and its data, bench.dat): faults/s against threads per
    benchmark, a line per configuration; its path, or None."""
    dat = os.path.join(out, 'bench.dat')
    with open(dat, 'w') as f:
        for b in benches:
            f.write('# %s\n' % b)
            for t in threads:
                row = [str(t)]
                for a, c, _ in WALL_CONFIGS:
                    r = runs.get((b, t, a, c))
                    row.append('%.1f' % statistics.median(r.values())
                               if r else 'NaN')
                f.write(' '.join(row) + '\n')
            f.write('\n\n')
    png = os.path.join(out, 'bench.png')
    lines = multiplot(png, '1200,900', '2,2', 'pfscale page-fault scaling '
                      '(faults/s, median of repetitions, one boot)') + [
        'set ylabel "faults/s"', 'set key top left', 'set grid',
        'set xtics (%s)' % ', '.join(str(t) for t in threads)]
    for i, b in enumerate(benches):
        lines.append('set title "%s"' % b)
        parts = ["'%s' index %d using 1:%d with linespoints title '%s'"
                 % (dat, i, j + 2, c[2]) for j, c in enumerate(WALL_CONFIGS)]
        lines.append('plot ' + ', '.join(parts))
    lines.append('unset multiplot')
    return run_gnuplot(lines, png)


def plot_cost(out, benches, threads, medians, configs):
    """cost.png (and cost.dat): instructions and transfers per fault
    against threads, a line per configuration; @medians: {(metric, bench,
    threads, config key): median}. Its path, or None."""
    dat = os.path.join(out, 'cost.dat')
    with open(dat, 'w') as f:
        for metric in ('insns', 'transfers'):
            for b in benches:
                f.write('# %s %s\n' % (metric, b))
                for t in threads:
                    row = [str(t)]
                    for key, _ in configs:
                        m = medians.get((metric, b, t) + key)
                        row.append('%.2f' % m if m is not None else 'NaN')
                    f.write(' '.join(row) + '\n')
                f.write('\n\n')
    png = os.path.join(out, 'cost.png')
    lines = multiplot(png, '1600,900', '2,%d' % len(benches),
                      'pfscale per-fault cost (pfcost plugin, median of '
                      'repetitions)') + [
        'set key top left', 'set grid', 'set yrange [0:*]',
        'set xtics (%s)' % ', '.join(str(t) for t in threads)]
    i = 0
    for metric, label in (('insns', 'instructions/fault'),
                          ('transfers', 'line transfers/fault')):
        # instruction lines sit at the top of their plots: key below them
        lines.append('set key %s' % ('bottom right' if metric == 'insns'
                                      else 'top left'))
        for b in benches:
            lines.append('set title "%s"' % b)
            lines.append('set ylabel "%s"' % label)
            parts = ["'%s' index %d using 1:%d with linespoints title '%s'"
                     % (dat, i, j + 2, c[1]) for j, c in enumerate(configs)]
            lines.append('plot ' + ', '.join(parts))
            i += 1
    lines.append('unset multiplot')
    return run_gnuplot(lines, png)


def console(args, result, table, cost_text, png):
    """What make bench prints: the tables and where the files are."""
    print('pfscale bench (%s, %s): faults/s, median of repetitions; '
          'ratios from the same boot%s' % (args.accel, os.path.basename(
              args.kernel.rstrip('/')) or 'kernel',
              '; wall clock under the pfcost plugin: noisy here, see the '
              'counts below' if args.cost else ''))
    print('\n'.join(table))
    print('(the columns: docs/bench.md, "Reading the report")')
    if cost_text:
        print()
        print('Per fault, from the pfcost plugin: balance %.0f%%+, full '
              'speed %s (pfbench\'s verdicts)' % (
                  100 * result['min_balance'],
                  '%.0f%%+' % (100 * result['full_speed'])
                  if result.get('full_speed') else '(not judged)'))
        print('\n'.join(cost_text))
    print('table: %s  json: %s  plot: %s' % (
        os.path.join(args.out, 'bench.txt'),
        os.path.join(args.out, 'bench.json'), png or '(gnuplot failed)'))
    if cost_text:
        print('cost table: %s  cost plot: %s' % (
            os.path.join(args.out, 'bench-cost.txt'),
            result.get('cost_png') or '(gnuplot failed)'))
