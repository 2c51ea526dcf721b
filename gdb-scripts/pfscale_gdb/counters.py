#
# pfscale gdb helpers: the per-CPU pfscale counters
#
# The names come from the kernel's pfscale_counter_desc[], so the command
# follows whatever counter set the patched kernel has.
#

import collections

import gdb

from linux import cpus

from pfscale_gdb import util

# One counter's description, as the kernel's pfscale_counter_desc[] has it
# (include/linux/pfscale_counters.h says what kind and level mean).
CounterDesc = collections.namedtuple("CounterDesc",
                                     "name kind level site meaning")


_descs = None


def _forget_descs(event=None):
    """The descriptions are constant data of one vmlinux: read again after
    gdb loads a new objfile."""
    global _descs
    _descs = None


gdb.events.new_objfile.connect(_forget_descs)


def counter_descs():
    """Return [CounterDesc] from pfscale_counter_desc[], in counter order."""
    global _descs
    if _descs is not None:
        return _descs
    if not util.have_symbol("pfscale_counter_desc") or \
            not util.have_symbol("pfscale_counters"):
        raise util.PfError("kernel has no pfscale patches")
    n = int(gdb.parse_and_eval("pfscale_nr_counters"))
    desc = gdb.parse_and_eval("pfscale_counter_desc")
    # Older pfscale kernels' tables have no kind or level: "" for those.
    have = set(f.name for f in desc[0].type.fields())
    out = []
    for i in range(n):
        d = desc[i]
        out.append(CounterDesc(*(d[f].string() if f in have and int(d[f])
                                 else "" for f in CounterDesc._fields)))
    _descs = out
    return _descs


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

pf-counters [--json] [--cpus]: one line per counter (name, total, kind,
site);
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
        names = [d.name for d in descs]
        if "--json" in opts:
            util.write_json({
                "counters": dict(zip(names, totals)),
                "per_cpu": {str(c): dict(zip(names, v))
                            for c, v in percpu.items()},
                "desc": {d.name: {"kind": d.kind, "level": d.level,
                                  "site": d.site, "meaning": d.meaning}
                         for d in descs},
            })
            return
        width = max([len(n) for n in names] + [7])
        for name, total, d in zip(names, totals, descs):
            line = "{:<{w}} {:>12}  {:<6}  {}".format(name, total, d.kind,
                                                      d.site, w=width)
            if "--cpus" in opts:
                line += "  [" + " ".join(
                    "{}:{}".format(c, percpu[c][names.index(name)])
                    for c in sorted(percpu)) + "]"
            gdb.write(line.rstrip() + "\n")


PfCounters()
