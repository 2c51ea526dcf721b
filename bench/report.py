#!/usr/bin/python3
"""Summarise pfbench BENCH lines from one boot: faults/s per configuration
(median and spread over repetitions), same-boot ratios atomic/stock and
counters on/off, as a table, bench.json and bench.png (gnuplot).

With --cost (the pfcost plugin's records of that boot, one per run, matched
by the BENCH line's interval number): instructions and cache-line transfers
per fault per configuration, their spread, the same ratios on them, and the
top functions and data by transfers; bench-cost.txt and cost.png. With
--floor-log/--floor-cost (a boot of the unpatched perf kernel): the
unpatched kernel as one more configuration, and patched-with-counters-off
over unpatched."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def run_gnuplot(lines, png):
    """Run gnuplot on the script @lines; @png, or None if it failed."""
    try:
        subprocess.run(['gnuplot'], input='\n'.join(lines), text=True,
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('pfscale: gnuplot failed: %s' % e, file=sys.stderr)
        return None
    return png

def bench_lines(log):
    """(bench, threads, atomic, counters, rep, faults, secs, interval,
    balance) per BENCH line; interval is None before the plugin's markers,
    balance (the slowest worker's faults over the first done's, when that
    one was done) before pfbench measured it."""
    out = []
    with open(log, errors='replace') as f:
        for line in f:
            line = line.strip().replace('\r', '')
            if not line.startswith('BENCH '):
                continue
            w = line.split()
            out.append((w[1], int(w[2]), int(w[3]), int(w[4]), int(w[5]),
                        int(w[6]), float(w[7]),
                        int(w[8]) if len(w) > 8 else None,
                        float(w[9]) if len(w) > 9 else None))
    return out


def pfbench_header(log):
    """From pfbench's header line: {'min_balance', 'full_speed', 'reps'},
    each None when the line does not give it (its default balance: 0.95)."""
    header = {'min_balance': 0.95, 'full_speed': None, 'reps': None}
    with open(log, errors='replace') as f:
        for line in f:
            if line.startswith('# pfbench:') and ' reps,' in line:
                for key, pattern, kind in (
                        ('min_balance', r' balance ([0-9.]+)', float),
                        ('full_speed', r' full speed ([0-9.]+)', float),
                        ('reps', r' ([0-9]+) reps,', int)):
                    m = re.search(pattern, line)
                    if m:
                        header[key] = kind(m.group(1))
                break
    return header


def verdicts(log):
    """pfbench's verdict on each run, {(bench, threads, atomic, counters,
    rep): used}, from its USED lines (printed once all runs are done):
    used when balanced and at full speed, a rule pfbench alone applies
    (bench/pfbench.c)."""
    out = {}
    with open(log, errors='replace') as f:
        for line in f:
            w = line.strip().replace('\r', '').split()
            if len(w) == 9 and w[0] == 'USED':
                out[(w[1],) + tuple(int(x) for x in w[2:6])] = w[8] == '1'
    return out


def parse(log):
    """{(bench, threads, atomic, counters): {rep: faults/s}}"""
    runs = {}
    for name, t, a, c, rep, faults, secs, _, _ in bench_lines(log):
        runs.setdefault((name, t, a, c), {})[rep] = faults / secs
    return runs


# Per-fault figures from a pfcost record (qemu/plugin/pfcost.c).
COST_METRICS = ('insns', 'insns_kernel', 'insns_user', 'insns_spin',
                'transfers', 'transfers_run')


def per_fault(rec, faults, used):
    """insns: the work, without spin-waiting (counted apart, insns_spin);
    transfers: over the record's window, the stretch in which all workers
    run (pfbench), per fault in it; transfers_run: over the whole run.
    used: pfbench's verdict on the run (None: an older pfbench gave
    none)."""
    ins = rec['insns']
    spin = ins['spin_user'] + ins['spin_kernel']
    total = ins['user'] + ins['kernel'] - spin
    win = rec.get('window')
    xfer = rec['transfers']['total'] / faults
    if win and win['page_faults']:
        xfer = win['transfers'] / win['page_faults']
    return {'insns': total / faults,
            'insns_kernel': ins['kernel'] / faults,
            'insns_user': ins['user'] / faults,
            'insns_spin': spin / faults,
            'transfers': xfer,
            'transfers_run': rec['transfers']['total'] / faults,
            'used': used}


def counts(pf):
    """Whether a run counts: pfbench's verdict (balanced and at full
    speed); every run of an older pfbench without verdicts."""
    return pf['used'] is None or pf['used']


def metric_values(reps, metric):
    """The repetitions' values of @metric, those of the runs that count
    (all if none does); (values, runs that count). How many lines move
    depends on how the workers' speeds compare and on how fast the host
    runs them, and while one waits for another (same_region's barrier) its
    vCPU keeps taking timer ticks: instructions too."""
    pfs = [pf for pf, _ in reps.values()]
    used = [pf for pf in pfs if counts(pf)]
    return [pf[metric] for pf in used or pfs], len(used)


def parse_cost(log, cost, tag=None):
    """{key: {rep: (per-fault dict, record)}} from BENCH lines and the
    plugin records they name; key as parse()'s, or (bench, threads, tag)
    for a floor boot."""
    recs = {}
    with open(cost) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                recs[r['seq']] = r
    runs = {}
    verdict = verdicts(log)
    for name, t, a, c, rep, faults, _, interval, _ in bench_lines(log):
        r = recs.get(interval)
        if r is None or not faults:
            continue
        key = (name, t, tag) if tag else (name, t, a, c)
        runs.setdefault(key, {})[rep] = (
            per_fault(r, faults, verdict.get((name, t, a, c, rep))),
            r)
    return runs


def cost_summary(reps):
    """Median and spread of each per-fault metric over the repetitions
    that count, and how many did."""
    out = {}
    for m in COST_METRICS:
        values, used = metric_values(reps, m)
        out[m] = summary(values)
    out['used_runs'] = used
    return out


def cost_ratio(cost, num, den, metric):
    """Paired ratios of back-to-back runs: pairs of runs that count (all
    pairs if there is none)."""
    if num not in cost or den not in cost:
        return None
    both = [r for r in cost[num] if r in cost[den] and
            cost[den][r][0][metric]]
    used = [r for r in both if counts(cost[num][r][0])
            and counts(cost[den][r][0])]
    both = used or both
    pairs = [cost[num][r][0][metric] / cost[den][r][0][metric] for r in both]
    if not pairs:
        return None
    return {'median': statistics.median(pairs), 'min': min(pairs),
            'max': max(pairs), 'pairs': pairs}


def cost_ratio_unpaired(cost, num, den, metric):
    """Two boots have no pairs: the ratio of medians, and its range from
    the extremes."""
    if num not in cost or den not in cost:
        return None
    a = metric_values(cost[num], metric)[0]
    b = metric_values(cost[den], metric)[0]
    if not min(b):
        return None
    return {'median': statistics.median(a) / statistics.median(b),
            'min': min(a) / max(b), 'max': max(a) / min(b)}


def top_sites(reps, key, field, n=5):
    """The n names with most counts in the records' list @key, summed over
    repetitions, as [name, share of the configuration's transfers]."""
    total = {}
    for _, rec in reps.values():
        for e in rec.get(key, []):
            total[e[field]] = total.get(e[field], 0) + e['n']
    denom = sum(r['transfers']['total'] for _, r in reps.values()) or 1
    if key == 'top_insns':
        denom = sum(r['insns']['user'] + r['insns']['kernel']
                    for _, r in reps.values()) or 1
    return [[k, v / denom] for k, v in
            sorted(total.items(), key=lambda kv: -kv[1])[:n]]


def hot_lines(reps, n=5):
    """The hottest lines over the repetitions (one physical line each, its
    counts added), with their share of the transfers."""
    lines = {}
    for _, rec in reps.values():
        for h in rec['hot_lines']:
            if h['pa'] in lines:
                lines[h['pa']]['n'] += h['n']
            else:
                lines[h['pa']] = dict(h)
    denom = sum(r['transfers']['total'] for _, r in reps.values()) or 1
    top = sorted(lines.values(), key=lambda h: -h['n'])[:n]
    for h in top:
        h['share'] = h['n'] / denom
    return top


def class_shares(reps):
    total = {}
    for _, rec in reps.values():
        for k, v in rec['by_class'].items():
            total[k] = total.get(k, 0) + v
    denom = sum(total.values()) or 1
    return {k: v / denom for k, v in sorted(total.items(),
                                            key=lambda kv: -kv[1]) if v}


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
    return run_gnuplot(lines, png)


def plot_cost(out, benches, threads, cost, configs):
    dat = os.path.join(out, 'cost.dat')
    with open(dat, 'w') as f:
        for metric in ('insns', 'transfers'):
            for b in benches:
                f.write('# %s %s\n' % (metric, b))
                for t in threads:
                    row = [str(t)]
                    for key, _ in configs:
                        r = cost.get((b, t) + key)
                        row.append('%.2f' % statistics.median(
                            metric_values(r, metric)[0])
                            if r else 'NaN')
                    f.write(' '.join(row) + '\n')
                f.write('\n\n')
    png = os.path.join(out, 'cost.png')
    lines = ['set terminal pngcairo size 1600,900 noenhanced',
             "set output '%s'" % png,
             'set multiplot layout 2,%d title "pfscale per-fault cost '
             '(pfcost plugin, median of repetitions)"' % len(benches),
             'set xlabel "threads"', 'set key top left', 'set grid',
             'set yrange [0:*]',
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


CONFIGS = [((0, 0), 'stock,counters_off'), ((0, 1), 'stock,counters_on'),
           ((1, 0), 'atomic,counters_off'), ((1, 1), 'atomic,counters_on')]


def cost_report(args, benches, threads, result):
    cost = parse_cost(args.log, args.cost)
    result.update(pfbench_header(args.log))
    if args.floor_log and args.floor_cost:
        cost.update(parse_cost(args.floor_log, args.floor_cost,
                               tag='unpatched'))
    if not cost:
        print('pfscale: no pfcost records match the BENCH lines of %s'
              % args.log, file=sys.stderr)
        return None
    configs = [(k, n) for k, n in CONFIGS
               if any((b, t) + k in cost for b in benches for t in threads)]
    if any((b, t, 'unpatched') in cost for b in benches for t in threads):
        configs.append((('unpatched',), 'unpatched'))
    table = ['%-12s %3s  %-20s %9s %6s %9s %6s %6s %8s %8s  %s' % (
        'benchmark', 'thr', 'configuration', 'insn/f', 'spread', 'xfer/f',
        'spread', 'used', 'kern/f', 'spin/f',
        'top transfer sites (share of xfers)')]
    ratios = ['%-12s %3s  %-22s %-22s %-22s %-22s %-22s' % (
        'benchmark', 'thr', 'insn/f atomic/stock', 'xfer/f atomic/stock',
        'insn/f cnt on/off', 'xfer/f cnt on/off',
        'insn/f cntoff/unpatch')]
    for b in benches:
        for t in threads:
            entry = next(e for e in result['results']
                         if e['benchmark'] == b and e['threads'] == t)
            entry['cost'] = {}
            for key, name in configs:
                reps = cost.get((b, t) + key)
                if not reps:
                    continue
                sm = cost_summary(reps)
                c = {'per_fault': sm,
                     'top_transfer_funcs': top_sites(reps, 'top_transfers',
                                                     'func'),
                     'top_transfer_data': top_sites(reps, 'top_data', 'sym'),
                     'top_insn_funcs': top_sites(reps, 'top_insns', 'func'),
                     'transfer_classes': class_shares(reps),
                     'hot_lines': hot_lines(reps),
                     'records': sorted(r['seq'] for _, r in reps.values())}
                # pfbench ran 3 x REPS repetitions and fewer were used
                c['short_of_reps'] = bool(result['reps']) and \
                    sm['used_runs'] < result['reps']
                entry['cost'][name] = c
                sites = ', '.join('%s %.0f%%' % (f, 100 * v) for f, v in
                                  c['top_transfer_funcs'][:3])
                table.append('%-12s %3d  %-20s %9.0f %5.1f%% %9.2f %5.1f%% '
                             '%6s %8.0f %8.0f  %s' % (
                                 b, t, name, sm['insns']['median'],
                                 100 * sm['insns']['spread'],
                                 sm['transfers']['median'],
                                 100 * sm['transfers']['spread'],
                                 '%d/%d%s' % (sm['used_runs'], len(reps),
                                              '*' if c['short_of_reps']
                                              else ''),
                                 sm['insns_kernel']['median'],
                                 sm['insns_spin']['median'], sites))
            rs = {
                'insns_atomic_over_stock': cost_ratio(
                    cost, (b, t, 1, 1), (b, t, 0, 1), 'insns'),
                'transfers_atomic_over_stock': cost_ratio(
                    cost, (b, t, 1, 1), (b, t, 0, 1), 'transfers'),
                'insns_counters_on_over_off_stock': cost_ratio(
                    cost, (b, t, 0, 1), (b, t, 0, 0), 'insns'),
                'transfers_counters_on_over_off_stock': cost_ratio(
                    cost, (b, t, 0, 1), (b, t, 0, 0), 'transfers'),
                'insns_counters_on_over_off_atomic': cost_ratio(
                    cost, (b, t, 1, 1), (b, t, 1, 0), 'insns'),
                'insns_counters_off_over_unpatched': cost_ratio_unpaired(
                    cost, (b, t, 0, 0), (b, t, 'unpatched'), 'insns'),
                'transfers_counters_off_over_unpatched': cost_ratio_unpaired(
                    cost, (b, t, 0, 0), (b, t, 'unpatched'), 'transfers'),
            }
            entry['cost_ratios'] = rs
            ratios.append('%-12s %3d  %-22s %-22s %-22s %-22s %-22s' % (
                b, t, fmt_ratio(rs['insns_atomic_over_stock']),
                fmt_ratio(rs['transfers_atomic_over_stock']),
                fmt_ratio(rs['insns_counters_on_over_off_stock']),
                fmt_ratio(rs['transfers_counters_on_over_off_stock']),
                fmt_ratio(rs['insns_counters_off_over_unpatched'])))
    sites = ['Top sites at %d threads, per configuration: functions by '
             'transfers; data classes; the hottest line' % max(threads)]
    for b in benches:
        entry = next(e for e in result['results']
                     if e['benchmark'] == b and e['threads'] == max(threads))
        for name, c in entry.get('cost', {}).items():
            hot = c['hot_lines'][0] if c['hot_lines'] else None
            sites.append('%-12s %-20s %s | %s | %s' % (
                b, name,
                ', '.join('%s %.0f%%' % (f, 100 * v)
                          for f, v in c['top_transfer_funcs']),
                ', '.join('%s %.0f%%' % (k, 100 * v) for k, v in
                          list(c['transfer_classes'].items())[:4]),
                '%s (first moved by %s) %.0f%%' % (
                    hot['what'], hot['first_func'], 100 * hot['share'])
                if hot else '-'))
    png = plot_cost(args.out, benches, threads, cost, configs)
    result['cost_png'] = png
    text = table + [''] + ratios + [''] + sites
    with open(os.path.join(args.out, 'bench-cost.txt'), 'w') as f:
        f.write('\n'.join(text) + '\n')
    return text


# The repeatability bar: a second make bench gives every per-fault count
# within REPEAT_WITHIN. Transfers at one thread are about 0 (a single
# faulting thread moves no line; what is left is the idle vCPU's work):
# those are judged as the model test judges private lines, about 0, here
# under ABOUT_ZERO per fault in both runs, one transfer per hundred faults
# (on hardware a transfer costs 100-300 cycles, a fault 2700-6300
# instructions here). A relative bar means nothing at 0.000-0.006.
REPEAT_WITHIN = 0.05
ABOUT_ZERO = 0.01


def repeatability_bar(worst, most_1thread):
    """{'met': bool, 'missed': [why, ...]} from compare()'s worst
    deviations and the largest 1-thread transfers per fault."""
    missed = ['%s within %.1f%% (%s)' % (what, 100 * worst[m][0],
                                         worst[m][1])
              for m, what in (('insns', 'instructions/fault'),
                              ('transfers', 'transfers/fault at 2+ threads'))
              if worst[m][0] > REPEAT_WITHIN]
    if most_1thread[0] >= ABOUT_ZERO:
        missed.append('transfers/fault at 1 thread %.3f (%s), not about 0'
                      % most_1thread)
    return {'met': not missed, 'missed': missed}


def compare(result, prev_path):
    """Per-fault medians of this run against an earlier bench.json: the
    deviation |this/earlier - 1| per configuration and its maximum."""
    try:
        with open(prev_path) as f:
            prev = json.load(f)
    except (OSError, ValueError) as e:
        return ['(no earlier run to compare with: %s)' % e], None
    old = {}
    for e in prev.get('results', []):
        for name, c in e.get('cost', {}).items():
            old[(e['benchmark'], e['threads'], name)] = c['per_fault']
    lines = ['%-12s %3s  %-20s %9s %9s %7s %9s %9s %7s' % (
        'benchmark', 'thr', 'configuration', 'insn/f', 'earlier', 'dev',
        'xfer/f', 'earlier', 'dev')]
    # Transfers at one thread are not the faults': a single faulting thread
    # moves no line. They are the idle vCPU's own work (its timers, what a
    # 2-thread round left it), a few thousandths per fault with the idle
    # vCPU isolated (bench/run.sh): judged apart, and in absolute terms.
    worst = {'insns': (0, None), 'transfers': (0, None),
             'transfers_1thread': (0, None),
             'transfers_1thread_abs': (0, None)}
    most_1thread = (0, None)    # the largest 1-thread transfers, either run
    for e in result['results']:
        for name, c in e.get('cost', {}).items():
            o = old.get((e['benchmark'], e['threads'], name))
            if not o:
                continue
            row = [e['benchmark'], e['threads'], name]
            for m in ('insns', 'transfers'):
                a, b = c['per_fault'][m]['median'], o[m]['median']
                # (from none to some: 100%)
                dev = abs(a / b - 1) if b else float(a != b)
                w = m + '_1thread' if m == 'transfers' and \
                    e['threads'] == 1 else m
                if dev >= worst[w][0]:
                    worst[w] = (dev, '%s %d %s' % tuple(row[:3]))
                if w == 'transfers_1thread' and \
                        abs(a - b) >= worst[w + '_abs'][0]:
                    worst[w + '_abs'] = (abs(a - b),
                                         '%s %d %s' % tuple(row[:3]))
                if w == 'transfers_1thread' and \
                        max(a, b) >= most_1thread[0]:
                    most_1thread = (max(a, b), '%s %d %s' % tuple(row[:3]))
                row += [a, b, dev]
            lines.append('%-12s %3d  %-20s %9.1f %9.1f %6.1f%% %9.3f %9.3f '
                         '%6.1f%%' % (row[0], row[1], row[2], row[3], row[4],
                                      100 * row[5], row[6], row[7],
                                      100 * row[8]))
    summary = {m: {'max_deviation': d, 'where': w}
               for m, (d, w) in worst.items()}
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
    # The ratios of configurations run back to back in one repetition:
    # a disturbance of the host that lowers every configuration's
    # transfers for a while cancels out of them.
    old_ratios = dict(((e['benchmark'], e['threads']), e['cost_ratios'])
                      for e in prev.get('results', []) if 'cost_ratios' in e)
    rworst = {}
    for e in result['results']:
        o = old_ratios.get((e['benchmark'], e['threads']))
        if not o or e['threads'] < 2:
            continue
        for name, r in e.get('cost_ratios', {}).items():
            # (the unpatched floor is another boot: not a pair; a ratio
            # with no pair of runs used in either run is None)
            if 'unpatched' in name or not r or not o.get(name) or \
                    not o[name]['median']:
                continue
            dev = abs(r['median'] / o[name]['median'] - 1)
            if dev >= rworst.get(name, (0, None))[0]:
                rworst[name] = (dev, '%s %d' % (e['benchmark'],
                                                e['threads']))
    if rworst:
        lines.append('ratios of back-to-back pairs, 2+ threads, against the earlier run: ' +
                     ', '.join('%s within %.1f%% (worst: %s)' % (
                         n, 100 * d, w) for n, (d, w) in sorted(
                             rworst.items())))
        summary['ratios'] = dict((n, {'max_deviation': d, 'where': w})
                                 for n, (d, w) in rworst.items())
    # last: the verdict
    summary['bar'] = repeatability_bar(worst, most_1thread)
    lines.append('the bar (instructions and transfers at 2+ threads within '
                 '%.0f%%; transfers at 1 thread about 0, under %.2f per fault '
                 'in both runs): %s' % (
                     100 * REPEAT_WITHIN, ABOUT_ZERO,
                     'met' if summary['bar']['met'] else
                     'missed: ' + '; '.join(summary['bar']['missed'])))
    return lines, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--log', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--accel', default='unknown')
    ap.add_argument('--kernel', default='')
    ap.add_argument('--cost', help="the pfcost plugin's records of the boot")
    ap.add_argument('--floor-log', help='BENCH lines of an unpatched boot')
    ap.add_argument('--floor-cost', help='its pfcost records')
    ap.add_argument('--compare', help='an earlier bench.json: per-fault '
                    'medians against it (repeatability)')
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
    cost_text = None
    if args.cost:
        cost_text = cost_report(args, benches, threads, result)
        if cost_text and args.compare:
            lines, result['repeatability'] = compare(result, args.compare)
            cost_text += ['', 'Against the earlier run (median per fault; '
                          'dev: |this/earlier - 1|)'] + lines
            with open(os.path.join(args.out, 'bench-cost.txt'), 'w') as f:
                f.write('\n'.join(cost_text) + '\n')
    with open(os.path.join(args.out, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, 'bench.txt'), 'w') as f:
        f.write('\n'.join(table) + '\n')
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print('pfscale bench (%s, %s): faults/s, median of repetitions; '
          'ratios from the same boot%s' % (args.accel, os.path.basename(
              args.kernel.rstrip('/')) or 'kernel',
              '; wall clock under the pfcost plugin: noisy here, see the '
              'counts below' if args.cost else ''))
    print('\n'.join(table))
    print('f/s: median faults/s; spread: (max-min)/median over repetitions. '
          'Ratios: median [min-max] of per-repetition pairs run back to back '
          'in this boot; atomic/stock with counters on; counters on/off on '
          'each path.')
    if cost_text:
        print()
        print('Per fault, from the pfcost plugin (insn/f: everything '
              'every vCPU executed between the run\'s markers but '
              'spin-waiting (spin/f), over its faults; '
              'xfer/f: line transfers per fault while all workers ran): '
              'median over the repetitions used; spread '
              '(max-min)/median; used: runs used of all: balanced (the '
              'slowest worker had %.0f%%+ of the first done\'s faults) and '
              'at full speed (its faults per second %s of its '
              'configuration\'s usual), pfbench\'s verdict; *: fewer '
              'than REPS used, after pfbench\'s 3 x REPS runs; kern/f, spin/f: '
              'kernel and spin-wait instructions per fault. Ratios: median '
              '[min-max] of per-repetition pairs of runs used; '
              'cntoff/unpatch: stock,counters_off over the '
              'unpatched kernel (two boots: ratio of medians [extremes]).'
              % (100 * result['min_balance'],
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


if __name__ == '__main__':
    main()
