"""The records make bench reads, and their one reader.

pfbench (bench/pfbench.c) writes one JSON object a line on the guest's
console, each with its schema ("pfbench"), version and kind of record:
the header (how the runs were made and judged), one "run" record per run
and, once all runs are done, one "verdict" record per run. The pfcost
plugin (qemu/plugin/pfcost.c) writes one JSON object a line per interval
to its own file, numbered by "seq"; a run record's "interval" names the
plugin record that counted the run. docs/bench.md ("pfbench's records")
gives every key.

Everything that reads these records (bench/report.py, tests/host) reads
them here."""
import json

SCHEMA = 'pfbench'
VERSION = 1
# What names a run, in a run record and in its verdict record.
RUN_KEY = ('bench', 'threads', 'atomic', 'counters', 'rep')
# The header's judging figures when a log has no header record.
HEADER_DEFAULTS = {'min_balance': 0.95, 'full_speed': None, 'reps': None}


def record(kind, **members):
    """A pfbench record of @kind ('header', 'run', 'verdict') with
    @members, as pfbench writes it (for tests that make records)."""
    return dict({'schema': SCHEMA, 'version': VERSION, 'record': kind},
                **members)


def pfbench_lines(path):
    """The pfbench records in the file at @path, in order, as (line as
    pfbench wrote it, record): its console log (other lines, boot messages
    and '#' comments, are passed over) or the records alone. A record of
    another version is an error (ValueError): its keys may mean something
    else."""
    out = []
    with open(path, errors='replace') as f:
        for line in f:
            line = line.strip().replace('\r', '')
            if not line.startswith('{'):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue        # a line the console cut or mixed
            if not isinstance(rec, dict) or rec.get('schema') != SCHEMA:
                continue
            if rec.get('version') != VERSION:
                raise ValueError('%s: pfbench record of version %s, this '
                                 'reader knows %d' % (path, rec.get('version'),
                                                      VERSION))
            out.append((line, rec))
    return out


def pfbench_records(path):
    """The pfbench records in the file at @path (pfbench_lines()), in
    order."""
    return [rec for _, rec in pfbench_lines(path)]


def run_key(rec):
    """The run a run or verdict record is about: (bench, threads, atomic,
    counters, rep)."""
    return tuple(rec[k] for k in RUN_KEY)


def read_pfbench(path):
    """One boot's pfbench records from @path: {'header': its judging
    figures (min_balance, full_speed, reps; HEADER_DEFAULTS where the
    header does not give them), 'runs': the run records in order,
    'verdicts': {run_key: used}} (a run without a verdict record has
    none: pfbench stopped before its verdicts)."""
    header = dict(HEADER_DEFAULTS)
    runs, verdicts = [], {}
    for rec in pfbench_records(path):
        kind = rec['record']
        if kind == 'header':
            header.update((k, rec[k]) for k in HEADER_DEFAULTS
                          if rec.get(k) is not None)
        elif kind == 'run':
            runs.append(rec)
        elif kind == 'verdict':
            verdicts[run_key(rec)] = rec['used']
    return {'header': header, 'runs': runs, 'verdicts': verdicts}


def read_pfcost(path):
    """The pfcost plugin's records in the file at @path: {seq: record}."""
    recs = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                recs[r['seq']] = r
    return recs


def layout_misses(recs):
    """How many transfers in the pfcost records @recs ({seq: record})
    the plugin's address map did not fit (its "layout" check; records
    without one: 0)."""
    return sum(r.get('layout', {}).get('misses', 0) for r in recs.values())


def main(argv):
    """records.py LOG: the pfbench records in LOG (a console log) on
    stdout, one a line as pfbench wrote them; exit 1 if there is no run
    record among them (bench/run.sh)."""
    lines = pfbench_lines(argv[1])
    for line, _ in lines:
        print(line)
    return 0 if any(r['record'] == 'run' for _, r in lines) else 1


if __name__ == '__main__':
    import sys
    sys.exit(main(sys.argv))
