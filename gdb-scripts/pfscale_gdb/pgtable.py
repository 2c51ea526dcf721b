#
# pfscale gdb helpers: x86-64 page-table walks of a task's user addresses
#
# 4-level paging (p4d folded into the pgd) or 5-level paging (pgd -> p4d ->
# pud -> pmd -> pte), detected at run time from CR4.LA57 and the kernel's
# __pgtable_l5_enabled. Tables are read as physical memory through the
# kernel's direct map at page_offset_base.
#

import struct

import gdb

from pfscale_gdb import decode, layout, tasks, util


SIZES = decode.SIZES
DIRECT_MAP_DEFAULT = {4: 0xffff888000000000, 5: 0xff11000000000000}
CR4_LA57 = 1 << 12
Paging = decode.Paging


def cr4():
    """CR4 of the selected vCPU, or None if the stub does not show it."""
    try:
        return int(gdb.parse_and_eval("$cr4")) & (2**64 - 1)
    except (gdb.error, gdb.MemoryError, ValueError):
        return None


def kernel_l5():
    """The kernel's __pgtable_l5_enabled (0/1), or None without it (a
    kernel built without CONFIG_X86_5LEVEL only does 4-level paging)."""
    if not util.have_symbol("__pgtable_l5_enabled"):
        return None
    try:
        return int(gdb.parse_and_eval("__pgtable_l5_enabled"))
    except (gdb.error, gdb.MemoryError):
        return None


def detect():
    """The guest's Paging, from CR4.LA57 and __pgtable_l5_enabled; both
    must agree when both are readable."""
    reg = cr4()
    la57 = None if reg is None else int(bool(reg & CR4_LA57))
    l5 = kernel_l5()
    src = ["CR4.LA57={}".format(la57) if la57 is not None else
           "no $cr4",
           "__pgtable_l5_enabled={}".format(l5) if l5 is not None else
           "no __pgtable_l5_enabled"]
    if la57 is not None and l5 is not None and la57 != int(bool(l5)):
        raise util.PfError("paging mode unclear: {}".format(", ".join(src)))
    return Paging(5 if la57 or l5 else 4, layout.defines(), ", ".join(src))


def page_offset_base(paging=None):
    try:
        return int(gdb.parse_and_eval("page_offset_base")) & (2**64 - 1)
    except gdb.error:
        return DIRECT_MAP_DEFAULT[paging.levels if paging else 4]


def flag_names(entry, paging=None):
    return decode.flag_names(entry, paging or detect())


def read_table(phys):
    """The entries of the page table at physical address phys."""
    ptrs = layout.defines().ptrs
    va = page_offset_base() + phys
    mem = gdb.selected_inferior().read_memory(va, ptrs * 8)
    return struct.unpack("<{}Q".format(ptrs), bytes(mem))


def read_entry(phys, idx):
    va = page_offset_base() + phys + idx * 8
    mem = gdb.selected_inferior().read_memory(va, 8)
    return struct.unpack("<Q", bytes(mem))[0]


def pgd_phys(mm):
    """Physical address of mm->pgd (a direct-map address)."""
    return int(mm["pgd"]) - page_offset_base()


def target_mm(pid_arg):
    """(pid, task, mm) for the optional PID argument (default: current)."""
    if gdb.selected_thread() is None:
        raise util.PfError("no guest attached (target remote :PORT)")
    if pid_arg is None:
        try:
            task = gdb.parse_and_eval("$lx_current()")
        except gdb.error:
            raise util.PfError("no PID given and no current task")
        pid = int(task["pid"])
        if int(task["mm"]) == 0:
            raise util.PfError("current task (pid {}) has no mm; give a PID"
                               .format(pid))
        return pid, task, task["mm"]
    pid = util.parse_int(pid_arg, "pid")
    task, mm = tasks.task_mm(pid)
    return pid, task, mm


def user_addr(text, paging, what="address", end=False):
    """Parse a user virtual address; an exclusive END may be user_top."""
    addr = util.parse_int(text, what)
    top = paging.user_top
    if addr < 0 or addr > top or (addr == top and not end):
        raise util.PfError("{} 0x{:x} is not a user address".format(what,
                                                                      addr))
    return addr


def walk(mm, addr, paging=None):
    """decode.walk_tables() for mm; the entry addresses are direct-map
    addresses."""
    paging = paging or detect()
    steps, result = decode.walk_tables(pgd_phys(mm), addr, paging,
                                       read_entry)
    base = page_offset_base(paging)
    return [(n, i, base + p, e) for n, i, p, e in steps], result


def range_runs(mm, start, end, paging, absent=None):
    """decode.range_runs() for mm, one read per page table."""
    return decode.range_runs(pgd_phys(mm), start, end, paging, read_table,
                             absent)


def step_json(name, idx, at, entry, paging):
    r = {"level": name, "index": idx, "at": "0x{:x}".format(at),
         "entry": "0x{:016x}".format(entry),
         "flags": flag_names(entry, paging)}
    if not decode.is_present(entry, paging.layout) and entry:
        r["swap"] = decode.nonpresent(entry, paging)
    return r


class PfWalk(gdb.Command):
    """Walk the page tables for a user virtual address.

pf-walk ADDR [PID] [--json]: walk ADDR in the mm of task PID (default: the
current task) through pgd -> p4d -> pud -> pmd -> pte, printing each
level's entry and its decoded flags (present, rw, user, accessed, dirty,
huge, nx, special, soft-dirty, uffd-wp, ...), and the physical address and
PFN it maps to. A PROT_NONE entry (present bit clear, protnone bit set)
is present, as the kernel's pte_present() says, and shown as "protnone".
A non-present entry is none, or a swap-format entry decoded by kind: a swap entry (type, offset), a migration, device or
hwpoison entry (pfn), a PTE marker (uffd-wp, pfscale-busy: a PTE parked
by a PTE-lock holder on the atomic path) or a swapin-error entry, with
its soft-dirty/uffd-wp/exclusive bits; --json adds them as "swap". 1G
and 2M huge mappings end the walk at the pud or pmd. The paging mode is
detected from CR4.LA57 and the kernel's __pgtable_l5_enabled: with 4-level
paging ("levels 4") the p4d is folded into the pgd, with 5-level the pgd
is indexed by bits 48-56 and a real p4d follows."""

    def __init__(self):
        super(PfWalk, self).__init__("pf-walk", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-walk")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) not in (1, 2) or opts - {"--json"}:
            raise util.PfError("usage: pf-walk ADDR [PID] [--json]")
        paging = detect()
        addr = user_addr(args[0], paging)
        pid, task, mm = target_mm(args[1] if len(args) > 1 else None)
        steps, result = walk(mm, addr, paging)
        if "--json" in opts:
            r = {"address": "0x{:x}".format(addr), "pid": pid,
                 "comm": task["comm"].string(), "mm": "0x{:x}".format(
                     int(mm)), "pgd": "0x{:x}".format(int(mm["pgd"])),
                 "levels": paging.levels, "levels_source": paging.source,
                 "steps": [step_json(n, i, v, e, paging)
                           for n, i, v, e in steps],
                 "present": result is not None}
            if result is not None:
                r.update({"phys": "0x{:x}".format(result[0]),
                          "pfn": result[0] >> paging.layout.page_shift,
                          "page_size": SIZES[result[1]],
                          "leaf_level": steps[-1][0]})
            util.write_json(r)
            return
        gdb.write("pf-walk 0x{:x} pid {} ({}) mm 0x{:x} pgd 0x{:x} levels {}"
                  "\n".format(addr, pid, task["comm"].string(), int(mm),
                              int(mm["pgd"]), paging.levels))
        for name, idx, va, entry in steps:
            gdb.write("  {}[{:3}] @0x{:x} = 0x{:016x} [{}]\n".format(
                name, idx, va, entry, flag_names(entry, paging)))
            if name == "pgd" and paging.levels == 4:
                gdb.write("  p4d        (folded into the pgd)\n")
        if result is None:
            gdb.write("pf-walk: 0x{:x} not mapped ({} not present)\n".format(
                addr, steps[-1][0]))
            return
        phys, shift = result
        page_shift = paging.layout.page_shift
        gdb.write("  => phys 0x{:x} pfn={} (0x{:x}) page {}{}\n".format(
            phys, phys >> page_shift, phys >> page_shift, SIZES[shift],
            "" if shift == page_shift else " (huge {})".format(
                steps[-1][0])))


class PfRange(gdb.Command):
    """List the present mappings of a user address range.

pf-range START END [PID] [--json]: the present pages of [START, END) in the
mm of task PID (default: the current task) as merged runs, "VSTART-VEND ->
pfn FIRST-LAST (N pages)", where a run is virtually and physically
contiguous (PROT_NONE pages are present; --json: "special" counts its
_PAGE_SPECIAL pages, the zero page and PFN maps, which RSS leaves out) and its huge leaves are counted ("; 2M x1"); then the total,
and the PTEs that are neither present nor none counted by kind ("not
present: swap x8, pte-marker x1"; --json: "not_present"). Each page
table is read with a single memory read; 4- or 5-level paging as
detected for pf-walk."""

    def __init__(self):
        super(PfRange, self).__init__("pf-range", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-range")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) not in (2, 3) or opts - {"--json"}:
            raise util.PfError("usage: pf-range START END [PID] [--json]")
        paging = detect()
        start = user_addr(args[0], paging, "start")
        end = user_addr(args[1], paging, "end", end=True)
        if end <= start:
            raise util.PfError("empty range 0x{:x}-0x{:x}".format(start, end))
        pid, task, mm = target_mm(args[2] if len(args) > 2 else None)
        absent = {}
        runs = range_runs(mm, start, end, paging, absent=absent)
        total = sum(r[2] for r in runs)
        page_shift = paging.layout.page_shift
        if "--json" in opts:
            util.write_json({
                "pid": pid, "start": "0x{:x}".format(start),
                "end": "0x{:x}".format(end), "levels": paging.levels,
                "runs": [{"start": "0x{:x}".format(va),
                          "end": "0x{:x}".format(va + (n << page_shift)),
                          "pfn": pfn, "pages": n,
                          "leaves": {SIZES[s]: c for s, c in kinds.items()},
                          "special": special}
                         for va, pfn, n, kinds, special in runs],
                "present_pages": total, "not_present": absent})
            return
        for va, pfn, n, kinds, _ in runs:
            huge = decode.leaf_kinds(kinds)
            gdb.write("0x{:x}-0x{:x} -> pfn 0x{:x}-0x{:x} ({} pages{})\n"
                      .format(va, va + (n << page_shift), pfn, pfn + n - 1, n,
                              "; " + huge if huge else ""))
        gdb.write("pf-range: pid {} 0x{:x}-0x{:x}: {} present pages in {} "
                  "runs{}\n".format(pid, start, end, total, len(runs),
                                    "; not present: " + ", ".join(
                                        "{} x{}".format(k, absent[k])
                                        for k in sorted(absent))
                                    if absent else ""))


PfWalk()
PfRange()
