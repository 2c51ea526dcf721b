"""make bench against an earlier run: the deviation of every per-fault
median and of every back-to-back ratio from the earlier bench.json, and
the repeatability bar (docs/bench.md, "Repeatability"). Pure functions;
bench/render.py words the result."""

# The repeatability bar: a second make bench gives every per-fault count
# within REPEAT_WITHIN. Transfers at one thread are about 0 (a single
# faulting thread moves no line; what is left is the idle vCPU's work):
# those are judged as the model test judges private lines, about 0, here
# under ABOUT_ZERO per fault in both runs. A relative bar means nothing
# at 0.000-0.006.
REPEAT_WITHIN = 0.05
ABOUT_ZERO = 0.01


def repeatability_bar(worst, most_1thread):
    """{'met': bool, 'missed': [why, ...]} from per_fault_deviations()'
    worst deviations and the largest 1-thread transfers per fault."""
    missed = ['%s within %.1f%% (%s)' % (what, 100 * worst[m][0],
                                         worst[m][1])
              for m, what in (('insns', 'instructions/fault'),
                              ('transfers', 'transfers/fault at 2+ threads'))
              if worst[m][0] > REPEAT_WITHIN]
    if most_1thread[0] >= ABOUT_ZERO:
        missed.append('transfers/fault at 1 thread %.3f (%s), not about 0'
                      % most_1thread)
    return {'met': not missed, 'missed': missed}


def earlier_per_fault(prev):
    """{(bench, threads, configuration): per-fault summary} of an earlier
    bench.json @prev."""
    old = {}
    for e in prev.get('results', []):
        for name, c in e.get('cost', {}).items():
            old[(e['benchmark'], e['threads'], name)] = c['per_fault']
    return old


def per_fault_deviations(result, prev):
    """Per-fault medians of @result against @prev: (rows, worst,
    most_1thread). A row: bench, threads, configuration, then this run's,
    the earlier run's and the deviation |this/earlier - 1| for insns and
    for transfers. worst: {what: (deviation, where)}. Transfers at one
    thread are not the faults' (a single faulting thread moves no line:
    they are the idle vCPU's own work), so they are judged apart, and in
    absolute terms too; most_1thread: the largest of them in either run,
    (transfers per fault, where)."""
    old = earlier_per_fault(prev)
    worst = {'insns': (0, None), 'transfers': (0, None),
             'transfers_1thread': (0, None),
             'transfers_1thread_abs': (0, None)}
    most_1thread = (0, None)
    rows = []
    for e in result['results']:
        for name, c in e.get('cost', {}).items():
            o = old.get((e['benchmark'], e['threads'], name))
            if not o:
                continue
            row = [e['benchmark'], e['threads'], name]
            where = '%s %d %s' % tuple(row)
            for m in ('insns', 'transfers'):
                a, b = c['per_fault'][m]['median'], o[m]['median']
                # (from none to some: 100%)
                dev = abs(a / b - 1) if b else float(a != b)
                w = m + '_1thread' if m == 'transfers' and \
                    e['threads'] == 1 else m
                if dev >= worst[w][0]:
                    worst[w] = (dev, where)
                if w == 'transfers_1thread':
                    if abs(a - b) >= worst[w + '_abs'][0]:
                        worst[w + '_abs'] = (abs(a - b), where)
                    if max(a, b) >= most_1thread[0]:
                        most_1thread = (max(a, b), where)
                row += [a, b, dev]
            rows.append(row)
    return rows, worst, most_1thread


def ratio_deviations(result, prev):
    """{ratio name: (deviation, where)}: the worst deviation of each ratio
    of configurations run back to back in one repetition, at 2+ threads,
    from @prev's (a disturbance of the host that lowers every
    configuration's transfers for a while cancels out of them). The
    unpatched floor is another boot, not a pair; a ratio with no pair of
    runs used in either run is None."""
    old_ratios = dict(((e['benchmark'], e['threads']), e['cost_ratios'])
                      for e in prev.get('results', []) if 'cost_ratios' in e)
    rworst = {}
    for e in result['results']:
        o = old_ratios.get((e['benchmark'], e['threads']))
        if not o or e['threads'] < 2:
            continue
        for name, r in e.get('cost_ratios', {}).items():
            if 'unpatched' in name or not r or not o.get(name) or \
                    not o[name]['median']:
                continue
            dev = abs(r['median'] / o[name]['median'] - 1)
            if dev >= rworst.get(name, (0, None))[0]:
                rworst[name] = (dev, '%s %d' % (e['benchmark'],
                                                e['threads']))
    return rworst


def compare(result, prev):
    """@result against an earlier bench.json @prev: {'rows', 'worst',
    'ratios', 'summary'}; summary is what bench.json keeps
    ('repeatability'): each worst deviation, the ratios' (if any) and,
    last, the bar."""
    rows, worst, most_1thread = per_fault_deviations(result, prev)
    rworst = ratio_deviations(result, prev)
    summary = {m: {'max_deviation': d, 'where': w}
               for m, (d, w) in worst.items()}
    if rworst:
        summary['ratios'] = dict((n, {'max_deviation': d, 'where': w})
                                 for n, (d, w) in rworst.items())
    summary['bar'] = repeatability_bar(worst, most_1thread)
    return {'rows': rows, 'worst': worst, 'ratios': rworst,
            'summary': summary}
