#
# pfscale gdb helpers: tasks, their mm and the split rss counters
#
# In 6.1 (SPLIT_RSS_COUNTING) each thread keeps an unsynced delta in
# task->rss_stat.count[] that is folded into mm->rss_stat every 64 events
# or on exit; the sum "mm + deltas" is what the counters really say.
#

import gdb

from linux import tasks

from pfscale_gdb import decode, layout, util


def task_by_pid(pid):
    """The task_struct of PID (a gdb.Value), or a PfError."""
    task = tasks.get_task_by_pid(pid)
    if task is None:
        raise util.PfError("no task with pid {}".format(pid))
    return task


def task_mm(pid):
    """(task, mm) of a user task; mm is a struct mm_struct * gdb.Value."""
    task = task_by_pid(pid)
    mm = task["mm"]
    if int(mm) == 0:
        raise util.PfError("pid {} ({}) is a kernel thread, it has no mm"
                           .format(pid, task["comm"].string()))
    return task, mm


def mm_tasks(mm):
    """Every task (thread) whose ->mm is mm."""
    for t in tasks.task_lists():
        if int(t["mm"]) == int(mm):
            yield t


def counter_names():
    """[(index, short name)] of the mm rss counters, from the kernel enum."""
    return layout.mm_counters()


def has_task_rss_stat():
    try:
        gdb.lookup_type("struct task_struct")["rss_stat"]
        return True
    except (gdb.error, KeyError):     # gdb.Type[] raises KeyError
        return False


def check_mm_rss_stat(mm):
    """One line instead of gdb's "Cannot subscript requested type" on a
    kernel whose mm->rss_stat is not 6.1's struct mm_rss_stat (6.2+: an
    array of struct percpu_counter, e.g. 6.12; issue 27)."""
    t = mm["rss_stat"].type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_ARRAY:
        raise util.PfError(
            "mm->rss_stat is {} (per-CPU RSS, Linux 6.2+): only 6.1's split "
            "RSS (mm->rss_stat.count[], task->rss_stat) is read here".format(
                t.target().strip_typedefs()))


def rss_report(pid):
    task, mm = task_mm(pid)
    check_mm_rss_stat(mm)
    names = counter_names()
    split = has_task_rss_stat()
    mmc = {n: int(mm["rss_stat"]["count"][i]["counter"]) for i, n in names}
    threads = []
    deltas = {n: 0 for _, n in names}
    for t in mm_tasks(mm):
        th = {"pid": int(t["pid"]), "comm": t["comm"].string()}
        if split:
            rs = t["rss_stat"]
            th["events"] = int(rs["events"])
            th["delta"] = {n: int(rs["count"][i]) for i, n in names}
            for n in deltas:
                deltas[n] += th["delta"][n]
        threads.append(th)
    split_counters = {n: mmc[n] + deltas[n] for n in mmc}
    return {
        "pid": pid,
        "tgid": int(task["tgid"]),
        "comm": task["comm"].string(),
        "mm": "0x{:x}".format(int(mm)),
        "threads": threads,
        "mm_counters": mmc,
        "delta_sum": deltas,
        "split_counters": split_counters,
        "rss_mm": decode.rss_sum(mmc),
        "rss_split": decode.rss_sum(split_counters),
    }


class PfRss(gdb.Command):
    """Show the split rss counters of a process's mm.

pf-rss PID [--json]: for every thread sharing PID's mm, its unsynced
task->rss_stat delta; then the mm's mm->rss_stat counters, rss_mm
(file + anon + shmem pages of the mm counters) and rss_split (the same with
the thread deltas added, i.e. what the counters really add up to)."""

    def __init__(self):
        super(PfRss, self).__init__("pf-rss", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-rss")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) != 1 or opts - {"--json"}:
            raise util.PfError("usage: pf-rss PID [--json]")
        r = rss_report(util.parse_int(args[0], "pid"))
        if "--json" in opts:
            util.write_json(r)
            return
        names = list(r["mm_counters"])
        gdb.write("pid {} ({}) mm {}, {} thread(s)\n".format(
            r["pid"], r["comm"], r["mm"], len(r["threads"])))
        gdb.write("{:>8} {:<16} {:>7}".format("pid", "comm", "events") +
                  "".join(" {:>11}".format(n) for n in names) + "\n")
        for t in r["threads"]:
            d = t.get("delta", {})
            gdb.write("{:>8} {:<16} {:>7}".format(
                t["pid"], t["comm"], t.get("events", "-")) +
                "".join(" {:>11}".format(d.get(n, "-")) for n in names) +
                "\n")
        for label, key in (("mm", "mm_counters"), ("deltas", "delta_sum"),
                           ("mm+deltas", "split_counters")):
            gdb.write("{:>25}".format(label + ":") + "".join(
                " {:>11}".format(r[key][n]) for n in names) + "\n")
        gdb.write("rss_mm {}  rss_split {}\n".format(r["rss_mm"],
                                                      r["rss_split"]))


PfRss()
