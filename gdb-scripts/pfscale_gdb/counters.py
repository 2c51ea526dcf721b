#
# pfscale gdb helpers: the per-CPU pfscale counters
#
# The names come from the kernel's pfscale_counter_desc[], so the command
# follows whatever counter set the patched kernel has.
#

import gdb

from linux import cpus

from pfscale_gdb import util


def counter_descs():
    """Return [(name, site, meaning)] from pfscale_counter_desc[]."""
    if not util.have_symbol("pfscale_counter_desc") or \
            not util.have_symbol("pfscale_counters"):
        raise util.PfError("kernel has no pfscale patches")
    n = int(gdb.parse_and_eval("pfscale_nr_counters"))
    desc = gdb.parse_and_eval("pfscale_counter_desc")
    out = []
    for i in range(n):
        d = desc[i]
        out.append(tuple(d[f].string() if int(d[f]) else ""
                         for f in ("name", "site", "meaning")))
    return out


def counter_values(ncounters):
    """Return (totals, {cpu: [values]}) over the possible CPUs."""
    ptr = gdb.parse_and_eval("&pfscale_counters")
    totals = [0] * ncounters
    percpu = {}
    for cpu in cpus.each_possible_cpu():
        count = cpus.per_cpu(ptr, cpu)["count"]
        vals = [int(count[i]) for i in range(ncounters)]
        percpu[cpu] = vals
        totals = [a + b for a, b in zip(totals, vals)]
    return totals, percpu


class PfCounters(gdb.Command):
    """Sum the pfscale page-fault counters over the possible CPUs.

pf-counters [--json] [--cpus]: one line per counter (name, total, site);
--cpus adds the per-CPU values, --json prints one JSON object
{"counters": {NAME: TOTAL}, "per_cpu": {CPU: {NAME: VALUE}}, ...}.
Names are read from the kernel's pfscale_counter_desc[]."""

    def __init__(self):
        super(PfCounters, self).__init__("pf-counters", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-counters")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if args or opts - {"--json", "--cpus"}:
            raise util.PfError("usage: pf-counters [--json] [--cpus]")
        descs = counter_descs()
        totals, percpu = counter_values(len(descs))
        names = [d[0] for d in descs]
        if "--json" in opts:
            util.write_json({
                "counters": dict(zip(names, totals)),
                "per_cpu": {str(c): dict(zip(names, v))
                            for c, v in percpu.items()},
                "desc": {d[0]: {"site": d[1], "meaning": d[2]}
                         for d in descs},
            })
            return
        width = max([len(n) for n in names] + [7])
        for name, total, d in zip(names, totals, descs):
            line = "{:<{w}} {:>12}  {}".format(name, total, d[1], w=width)
            if "--cpus" in opts:
                line += "  [" + " ".join(
                    "{}:{}".format(c, percpu[c][names.index(name)])
                    for c in sorted(percpu)) + "]"
            gdb.write(line.rstrip() + "\n")


PfCounters()
