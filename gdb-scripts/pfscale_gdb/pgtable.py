#
# pfscale gdb helpers: x86-64 page-table walks of a task's user addresses
#
# 4-level paging (the p4d level is folded into the pgd). Tables are read as
# physical memory through the kernel's direct map at page_offset_base.
#

import struct

import gdb

from pfscale_gdb import tasks, util


PAGE_SHIFT = 12
PTRS = 512
PHYS_MASK = ((1 << 52) - 1) & ~((1 << PAGE_SHIFT) - 1)
USER_TOP = 1 << 47
DIRECT_MAP_DEFAULT = 0xffff888000000000

FLAGS = ((0, "present"), (1, "rw"), (2, "user"), (3, "pwt"), (4, "pcd"),
         (5, "accessed"), (6, "dirty"), (7, "huge"), (8, "global"),
         (63, "nx"))

# name, shift of the address bits that index it
LEVELS = (("pgd", 39), ("pud", 30), ("pmd", 21), ("pte", 12))
SIZES = {30: "1G", 21: "2M", 12: "4K"}


def page_offset_base():
    try:
        return int(gdb.parse_and_eval("page_offset_base")) & (2**64 - 1)
    except gdb.error:
        return DIRECT_MAP_DEFAULT


def check_4level():
    try:
        if int(gdb.parse_and_eval("__pgtable_l5_enabled")):
            raise util.PfError("5-level paging is not supported")
    except gdb.error:
        pass


def flag_names(entry):
    if not entry & 1:
        return "not present"
    return " ".join(n for bit, n in FLAGS if entry >> bit & 1)


def entry_phys(entry, shift):
    """Physical address an entry points to (a table, or a page of 2**shift)."""
    return entry & PHYS_MASK & ~((1 << shift) - 1)


def read_table(phys):
    """The 512 entries of the page table at physical address phys."""
    va = page_offset_base() + phys
    mem = gdb.selected_inferior().read_memory(va, PTRS * 8)
    return struct.unpack("<{}Q".format(PTRS), bytes(mem))


def read_entry(phys, idx):
    va = page_offset_base() + phys + idx * 8
    mem = gdb.selected_inferior().read_memory(va, 8)
    return struct.unpack("<Q", bytes(mem))[0]


def pgd_phys(mm):
    """Physical address of mm->pgd (a direct-map address)."""
    return int(mm["pgd"]) - page_offset_base()


def target_mm(pid_arg):
    """(pid, task, mm) for the optional PID argument (default: current)."""
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


def user_addr(text, what="address", end=False):
    """Parse a user virtual address; an exclusive END may be USER_TOP."""
    addr = util.parse_int(text, what)
    if addr < 0 or addr > USER_TOP or (addr == USER_TOP and not end):
        raise util.PfError("{} 0x{:x} is not a user address".format(what,
                                                                      addr))
    return addr


def walk(mm, addr):
    """Walk addr; return ([(level, idx, entry_va, entry)], result) where
    result is (phys, shift) of the mapped page or None if not present."""
    check_4level()
    table = pgd_phys(mm)
    steps = []
    for name, shift in LEVELS:
        idx = addr >> shift & (PTRS - 1)
        entry = read_entry(table, idx)
        steps.append((name, idx, page_offset_base() + table + idx * 8,
                      entry))
        if not entry & 1:
            return steps, None
        if shift == 12 or (shift in (30, 21) and entry >> 7 & 1):
            return steps, (entry_phys(entry, shift) +
                           (addr & ((1 << shift) - 1)), shift)
        table = entry_phys(entry, PAGE_SHIFT)
    return steps, None


def present_leaves(table_phys, level, lo, hi, base, out):
    """Append (va, pfn, npages) of every present leaf in [lo, hi) under the
    table at table_phys, which maps from virtual address base."""
    name, shift = LEVELS[level]
    entries = read_table(table_phys)
    size = 1 << shift
    first = max(0, (lo - base) >> shift)
    last = min(PTRS - 1, (hi - 1 - base) >> shift)
    for idx in range(first, last + 1):
        entry = entries[idx]
        if not entry & 1:
            continue
        va = base + idx * size
        if shift == 12 or (shift in (30, 21) and entry >> 7 & 1):
            s = max(va, lo & ~((1 << PAGE_SHIFT) - 1))
            e = min(va + size, hi)
            pfn = (entry_phys(entry, shift) + (s - va)) >> PAGE_SHIFT
            out.append((s, pfn, (e - s + (1 << PAGE_SHIFT) - 1) >>
                        PAGE_SHIFT))
        else:
            present_leaves(entry_phys(entry, PAGE_SHIFT), level + 1,
                           max(lo, va), min(hi, va + size), va, out)


def merge_runs(leaves):
    """Merge leaves that are contiguous both virtually and physically."""
    runs = []
    for va, pfn, n in leaves:
        if runs:
            rva, rpfn, rn = runs[-1]
            if rva + (rn << PAGE_SHIFT) == va and rpfn + rn == pfn:
                runs[-1] = (rva, rpfn, rn + n)
                continue
        runs.append((va, pfn, n))
    return runs


class PfWalk(gdb.Command):
    """Walk the page tables for a user virtual address.

pf-walk ADDR [PID]: walk ADDR in the mm of task PID (default: the current
task) through pgd -> p4d (folded) -> pud -> pmd -> pte, printing each
level's entry and its decoded flags (present, rw, user, accessed, dirty,
huge, nx, ...), and the physical address and PFN it maps to. 1G and 2M
huge mappings end the walk at the pud or pmd."""

    def __init__(self):
        super(PfWalk, self).__init__("pf-walk", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-walk")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) not in (1, 2) or opts:
            raise util.PfError("usage: pf-walk ADDR [PID]")
        addr = user_addr(args[0])
        pid, task, mm = target_mm(args[1] if len(args) > 1 else None)
        steps, result = walk(mm, addr)
        gdb.write("pf-walk 0x{:x} pid {} ({}) mm 0x{:x} pgd 0x{:x}\n".format(
            addr, pid, task["comm"].string(), int(mm), int(mm["pgd"])))
        for name, idx, va, entry in steps:
            gdb.write("  {}[{:3}] @0x{:x} = 0x{:016x} [{}]\n".format(
                name, idx, va, entry, flag_names(entry)))
            if name == "pgd":
                gdb.write("  p4d        (folded into the pgd)\n")
        if result is None:
            gdb.write("pf-walk: 0x{:x} not mapped ({} not present)\n".format(
                addr, steps[-1][0]))
            return
        phys, shift = result
        gdb.write("  => phys 0x{:x} pfn={} (0x{:x}) page {}\n".format(
            phys, phys >> PAGE_SHIFT, phys >> PAGE_SHIFT, SIZES[shift]))


class PfRange(gdb.Command):
    """List the present mappings of a user address range.

pf-range START END [PID]: the present pages of [START, END) in the mm of
task PID (default: the current task) as merged runs, "VSTART-VEND -> pfn
FIRST-LAST (N pages)", where a run is virtually and physically contiguous;
then the total. Each page table is read with a single memory read."""

    def __init__(self):
        super(PfRange, self).__init__("pf-range", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-range")
    def invoke(self, arg, from_tty):
        args, opts = util.split_args(arg)
        if len(args) not in (2, 3) or opts:
            raise util.PfError("usage: pf-range START END [PID]")
        start = user_addr(args[0], "start")
        end = user_addr(args[1], "end", end=True)
        if end <= start:
            raise util.PfError("empty range 0x{:x}-0x{:x}".format(start, end))
        pid, task, mm = target_mm(args[2] if len(args) > 2 else None)
        check_4level()
        leaves = []
        present_leaves(pgd_phys(mm), 0, start, end, 0, leaves)
        runs = merge_runs(leaves)
        for va, pfn, n in runs:
            gdb.write("0x{:x}-0x{:x} -> pfn 0x{:x}-0x{:x} ({} pages)\n".format(
                va, va + (n << PAGE_SHIFT), pfn, pfn + n - 1, n))
        gdb.write("pf-range: pid {} 0x{:x}-0x{:x}: {} present pages in {} "
                  "runs\n".format(pid, start, end, sum(r[2] for r in runs),
                                  len(runs)))


PfWalk()
PfRange()
