"""make bench's statistics: from the records (bench/records.py) to the
per-run figures, and from those to medians, spreads, paired ratios and
the top sites. Pure functions: no files, no printing."""
import statistics

# Per-fault figures from a pfcost record (qemu/plugin/pfcost.c).
COST_METRICS = ('insns', 'insns_kernel', 'insns_user', 'insns_spin',
                'transfers', 'transfers_run')


def wall_rates(boot):
    """{(bench, threads, atomic, counters): {rep: faults/s}} from the run
    records of @boot (records.read_pfbench())."""
    runs = {}
    for r in boot['runs']:
        key = (r['bench'], r['threads'], r['atomic'], r['counters'])
        runs.setdefault(key, {})[r['rep']] = r['faults'] / r['secs']
    return runs


def per_fault(rec, faults, used):
    """A run's per-fault figures from its pfcost record @rec and its
    @faults (pfbench's count). insns: the work, without spin-waiting
    (counted apart, insns_spin); transfers: over the record's window, the
    stretch in which all workers run (pfbench), per fault in it;
    transfers_run: over the whole run. used: pfbench's verdict on the run
    (None: it gave none)."""
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


def cost_runs(boot, recs, tag=None):
    """{key: {rep: (per-fault dict, pfcost record)}} of the runs of @boot
    whose interval has a record in @recs (records.read_pfcost()); key
    (bench, threads, atomic, counters), or (bench, threads, @tag) for a
    floor boot."""
    runs = {}
    for r in boot['runs']:
        rec = recs.get(r.get('interval'))
        if rec is None or not r['faults']:
            continue
        name, t, a, c, rep = (r['bench'], r['threads'], r['atomic'],
                              r['counters'], r['rep'])
        key = (name, t, tag) if tag else (name, t, a, c)
        runs.setdefault(key, {})[rep] = (
            per_fault(rec, r['faults'],
                      boot['verdicts'].get((name, t, a, c, rep))), rec)
    return runs


def counts(pf):
    """Whether a run counts: pfbench's verdict (balanced and at full
    speed); a run without a verdict counts."""
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


def summary(values):
    """Median, extremes and spread ((max-min)/median) of @values."""
    med = statistics.median(values)
    spread = (max(values) - min(values)) / med if med else 0.0
    return {'median': med, 'min': min(values), 'max': max(values),
            'spread': spread, 'reps': len(values), 'runs': values}


def cost_summary(reps):
    """Median and spread of each per-fault metric over the repetitions
    that count, and how many did."""
    out = {}
    for m in COST_METRICS:
        values, used = metric_values(reps, m)
        out[m] = summary(values)
    out['used_runs'] = used
    return out


def pair_stats(pairs):
    """Median and extremes of paired ratios @pairs; None if there is none."""
    if not pairs:
        return None
    return {'median': statistics.median(pairs), 'min': min(pairs),
            'max': max(pairs), 'pairs': pairs}


def ratio(runs, num, den):
    """Paired ratios: each repetition's num over the same repetition's den
    (run back to back in the same boot), as median, min and max."""
    if num not in runs or den not in runs:
        return None
    return pair_stats([runs[num][r] / runs[den][r] for r in runs[num]
                       if r in runs[den] and runs[den][r]])


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
    return pair_stats([cost[num][r][0][metric] / cost[den][r][0][metric]
                       for r in both])


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
    """Each data class's share of the transfers over the repetitions,
    largest first, classes with none left out."""
    total = {}
    for _, rec in reps.values():
        for k, v in rec['by_class'].items():
            total[k] = total.get(k, 0) + v
    denom = sum(total.values()) or 1
    return {k: v / denom for k, v in sorted(total.items(),
                                            key=lambda kv: -kv[1]) if v}
