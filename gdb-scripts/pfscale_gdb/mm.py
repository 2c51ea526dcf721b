#
# pfscale gdb helpers: a process's mm_struct and its VMAs (pf-mm)
#
# The VMAs are the entries of mm->mm_mt, walked node by node (maple.py);
# the counters, locks and per-thread rss deltas are read from the mm and
# the tasks that share it (tasks.py).
#

import gdb

from pfscale_gdb import decode, layout, maple, pgtable, tasks, util


ULONG = 2**64 - 1


def counter(v):
    """The value of an atomic_t / atomic_long_t."""
    return int(v["counter"])


def perms(flags):
    """rwx and s (VM_MAYSHARE) or p, as /proc/PID/maps: decode.perms()."""
    return decode.perms(flags, layout.vm_flags()[0])


def dentry_path(dentry):
    """The path of a dentry up to its filesystem's root (mounts ignored):
    decode.dentry_path() of its names."""
    names, root = [], False
    for _ in range(decode.DENTRY_DEPTH + 1):
        names.append(dentry["d_name"]["name"].string())
        parent = dentry["d_parent"]
        if int(parent) == int(dentry):
            root = True
            break
        dentry = parent
    return decode.dentry_path(names, root)


def special_name(vma):
    """[vdso], [vvar], ... of a _install_special_mapping() VMA, or None."""
    ops = int(vma["vm_ops"])
    if not ops:
        return None
    try:
        sm = int(gdb.parse_and_eval("&special_mapping_vmops"))
    except gdb.error:
        return None
    if ops != sm or not int(vma["vm_private_data"]):
        return None
    spec = vma["vm_private_data"].cast(
        gdb.lookup_type("struct vm_special_mapping").pointer())
    return spec["name"].string() if int(spec["name"]) else None


def gate_vma():
    """x86's [vsyscall] VMA (not in any mm's tree, but /proc/PID/maps
    lists it last: get_gate_vma()), or None with vsyscall=none."""
    if not util.have_symbol("gate_vma") or \
            not util.have_symbol("vsyscall_mode"):
        return None
    if str(gdb.parse_and_eval("vsyscall_mode")) == "NONE":
        return None
    return gdb.parse_and_eval("&gate_vma")


def vma_name(mm, vma, start, end, f, kind):
    """(kind, name) of a VMA: file (its path), gate, special ([vdso]) or
    anon ([heap], [stack])."""
    if kind == "gate":
        return kind, "[vsyscall]"
    if f:
        return "file", dentry_path(vma["vm_file"]["f_path"]["dentry"])
    name = special_name(vma)
    if name:
        return "special", name
    if start <= int(mm["brk"]) and end >= int(mm["start_brk"]):
        return "anon", "[heap]"
    if start <= int(mm["start_stack"]) <= end:
        return "anon", "[stack]"
    return "anon", None


def vma_info(mm, vma, kind=None):
    """A VMA's fields as /proc/PID/maps shows them; gdb.MemoryError if its
    own words cannot be read. A name that cannot be read is empty, as in
    crash's pfvma."""
    start, end = int(vma["vm_start"]), int(vma["vm_end"])
    flags = int(vma["vm_flags"])
    pgoff, f = int(vma["vm_pgoff"]), int(vma["vm_file"])
    anon_vma = int(vma["anon_vma"]) != 0
    try:
        kind, name = vma_name(mm, vma, start, end, f, kind)
    except gdb.MemoryError:
        kind, name = "gate" if kind == "gate" else "file" if f else "anon", ""
    return {
        "vma": "0x{:x}".format(int(vma)),
        "start": "0x{:x}".format(start),
        "end": "0x{:x}".format(end),
        "perms": perms(flags),
        "flags": "0x{:x}".format(flags),
        "pgoff": decode.pgoff_bytes(pgoff, f != 0, layout.defines()),
        "kind": kind,
        "anon_vma": anon_vma,
        "name": name or "",
    }


def vmas(mm):
    """The VMAs of mm (a struct mm_struct * gdb.Value) from mm->mm_mt,
    then the gate VMA, as /proc/PID/maps lists them, as far as the tree
    can be read: {"vmas": [...], "problems": [one line each],
    "tree_ranges": {vma: (first, end) of the tree} of the VMAs marked,
    "inconsistencies": N, "maple_nodes", "maple_height"}. What is wrong
    is counted as crash's pfvma counts it: each walk problem, each
    unreadable VMA, and each VMA whose tree range is not its [vm_start,
    vm_end) or that starts below the one before ("tree_range_differs",
    marked "!!"); an internal entry is said but not counted."""
    vtype = gdb.lookup_type("struct vm_area_struct").pointer()
    tree = maple.walk(mm["mm_mt"])
    problems = list(tree["problems"])
    bad = len(problems)
    out, ranges, last_end = [], {}, 0
    for first, last, entry in tree["entries"]:
        if decode.xa_is_internal(entry):
            problems.append("0x{:x}-0x{:x}: internal maple entry 0x{:x}{}"
                            .format(first, last + 1, entry,
                                    " (XA_ZERO_ENTRY: mm being duplicated?)"
                                    if entry < layout.defines()[
                                        "MAPLE_RESERVED_RANGE"] else ""))
            continue
        try:
            info = vma_info(mm, gdb.Value(entry).cast(vtype))
        except gdb.MemoryError:
            problems.append("0x{:x}-0x{:x}: unreadable vm_area_struct 0x{:x}"
                            .format(first, last + 1, entry))
            bad += 1
            continue
        start, end = int(info["start"], 16), int(info["end"], 16)
        # The tree's range is the VMA's, and VMAs come in address order.
        if start != first or end != last + 1 or start < last_end:
            info["tree_range_differs"] = True
            ranges[info["vma"]] = (first, last + 1)
            bad += 1
        last_end = end
        out.append(info)
    gate = gate_vma()
    if gate is not None:
        out.append(vma_info(mm, gate, "gate"))
    return {"vmas": out, "problems": problems, "tree_ranges": ranges,
            "inconsistencies": bad, "maple_nodes": tree["nodes"],
            "maple_height": tree["height"]}


def rwsem_state(sem):
    count = counter(sem["count"]) & ULONG
    owner = counter(sem["owner"]) & ULONG
    k = layout.defines()
    state, flags = decode.rwsem_state(count, k)
    otask = owner & ~k["RWSEM_OWNER_FLAGS_MASK"] & ULONG
    odesc = ""
    if otask:
        t = gdb.Value(otask).cast(
            gdb.lookup_type("struct task_struct").pointer())
        try:
            odesc = "{} ({})".format(int(t["pid"]), t["comm"].string())
        except gdb.MemoryError:
            odesc = "?"
        if owner & k["RWSEM_READER_OWNED"]:
            odesc = "last reader " + odesc
    return {
        "count": "0x{:x}".format(count),
        "state": state,
        "flags": flags,
        "owner": "0x{:x}".format(owner),
        "owner_task": odesc,
    }


def spinlock_state(lock):
    raw = lock["rlock"]
    val = counter(raw["raw_lock"]["val"])
    out = {"val": "0x{:x}".format(val),
           "state": decode.qspin_state(val)}
    try:
        cpu = int(raw["owner_cpu"])
        out["owner_cpu"] = cpu if cpu >= 0 and cpu != 0xffffffff else None
    except gdb.error:
        pass
    return out


def mm_report(pid_arg):
    """(the report, {"problems": [lines], "tree_ranges": {vma: (first,
    end)}}): the report is what --json prints, as crash's pfvma -j."""
    pid, task, mm = pgtable.target_mm(pid_arg)
    rss = tasks.rss_report(pid)
    vs = vmas(mm)
    return {
        "pid": pid,
        "tgid": int(task["tgid"]),
        "comm": task["comm"].string(),
        "mm": "0x{:x}".format(int(mm)),
        "pgd": "0x{:x}".format(int(mm["pgd"])),
        "mm_users": counter(mm["mm_users"]),
        "mm_count": counter(mm["mm_count"]),
        "map_count": int(mm["map_count"]),
        "vm_flags_source": layout.vm_flags()[1],
        "pgtables_bytes": counter(mm["pgtables_bytes"]),
        "maple_height": vs["maple_height"],
        "maple_nodes": vs["maple_nodes"],
        "inconsistencies": vs["inconsistencies"],
        "mmap_lock": rwsem_state(mm["mmap_lock"]),
        "page_table_lock": spinlock_state(mm["page_table_lock"]),
        "rss": {
            "mm_counters": rss["mm_counters"],
            "delta_sum": rss["delta_sum"],
            "split_counters": rss["split_counters"],
            "rss_mm": rss["rss_mm"],
            "rss_split": rss["rss_split"],
        },
        "threads": rss["threads"],
        "vmas": vs["vmas"],
    }, vs


def write_report(r, marks):
    """pf-mm's text; marks: {vma: (first, end)} of the tree ranges of the
    VMAs marked "!!"."""
    w = gdb.write
    w("pid {} ({}) tgid {} mm {} pgd {}\n".format(
        r["pid"], r["comm"], r["tgid"], r["mm"], r["pgd"]))
    w("mm_users {}  mm_count {}  map_count {}  pgtables_bytes {}\n".format(
        r["mm_users"], r["mm_count"], r["map_count"], r["pgtables_bytes"]))
    ml = r["mmap_lock"]
    w("mmap_lock {} (count {}{}{})\n".format(
        ml["state"], ml["count"],
        ", " + " ".join(ml["flags"]) if ml["flags"] else "",
        ", owner " + ml["owner_task"] if ml["owner_task"] else ""))
    pl = r["page_table_lock"]
    w("page_table_lock {} (val {}{})\n".format(
        pl["state"], pl["val"],
        ", cpu {}".format(pl["owner_cpu"])
        if pl.get("owner_cpu") is not None else ""))
    rss = r["rss"]
    names = list(rss["mm_counters"])
    w("{:>27}".format("") + "".join(" {:>10}".format(n) for n in names) +
      "\n")
    for label, key in (("mm->rss_stat", "mm_counters"),
                       ("thread deltas", "delta_sum"),
                       ("sum", "split_counters")):
        w("{:>27}".format(label) + "".join(
            " {:>10}".format(rss[key][n]) for n in names) + "\n")
    w("rss_mm {}  rss_split {} pages\n".format(rss["rss_mm"],
                                               rss["rss_split"]))
    w("\n{} thread(s):\n{:>8} {:<16} {:>7}".format(
        len(r["threads"]), "pid", "comm", "events") +
      "".join(" {:>10}".format(n) for n in names) + "\n")
    for t in r["threads"]:
        d = t.get("delta", {})
        w("{:>8} {:<16} {:>7}".format(t["pid"], t["comm"],
                                      t.get("events", "-")) +
          "".join(" {:>10}".format(d.get(n, "-")) for n in names) + "\n")
    n = r["inconsistencies"]
    w("\n{} VMA(s){}:\n{:>25} {:<4} {:>8} {:<7} {}\n".format(
        len(r["vmas"]), ", {} inconsistencies (marked !!)".format(n)
        if n else "", "start-end", "perm", "pgoff", "kind", "name"))
    for v in r["vmas"]:
        mark = ""
        if v["vma"] in marks:
            mark = "  !! tree range {:x}-{:x}".format(*marks[v["vma"]])
        w("{:>12}-{:<12} {:<4} {:08x} {:<7} {}".format(
            v["start"][2:], v["end"][2:], v["perms"], v["pgoff"],
            v["kind"] + ("+av" if v["anon_vma"] else ""),
            v["name"]).rstrip() + mark + "\n")
    in_tree = len([v for v in r["vmas"] if v["kind"] != "gate"])
    if in_tree != r["map_count"]:
        w("pf-mm: warning: {} VMAs in mm_mt but map_count {}\n".format(
            in_tree, r["map_count"]))


class PfMm(gdb.Command):
    """Show a process's mm_struct, its VMAs and the threads sharing it.

pf-mm [PID] [--json]: the mm of task PID (default: the current task):
mm_users, mm_count, map_count, pgtables_bytes, the mmap_lock (rwsem count,
read/write state, owner) and page_table_lock; the rss counters of the mm,
the sum of the threads' unsynced task->rss_stat deltas and rss_mm /
rss_split; every thread with its deltas; and every VMA, walked from the
maple tree mm->mm_mt, then x86's [vsyscall] gate VMA, as /proc/PID/maps
lists them: start-end, perms (rwx, then s for VM_MAYSHARE, else p), pgoff
(in bytes, hex, 0 unless file-backed), kind (anon, file, special or gate;
+av if it has an anon_vma) and name (the file's path up to its
filesystem's root, [heap], [stack], [vdso], [vsyscall], ...). --json prints one JSON object
with the same fields, and maple_height, maple_nodes, inconsistencies.

A tree that is not as it should be (a snapshot mid-update, or corrupt) is
walked on, as crash's pfvma does: what the walk finds wrong (a pivot below
the one before or beyond its node's max, an unknown node type, an
unreadable node or VMA, a tree too deep or too big) is one "pf-mm: ..."
line each, before the report; a VMA whose tree range is not its
vm_start/vm_end is listed with "!! tree range START-END" (in --json
"tree_range_differs": true); the VMA summary line counts both
(", N inconsistencies (marked !!)"), --json in "inconsistencies"."""

    def __init__(self):
        super(PfMm, self).__init__("pf-mm", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-mm")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) > 1 or opts - {"--json"}:
            raise util.PfError("usage: pf-mm [PID] [--json]")
        r, vs = mm_report(args[0] if args else None)
        # what the walk found wrong, one line each, before the report
        for line in vs["problems"]:
            gdb.write("pf-mm: {}\n".format(line))
        if "--json" in opts:
            util.write_json(r)
        else:
            write_report(r, vs["tree_ranges"])


PfMm()
