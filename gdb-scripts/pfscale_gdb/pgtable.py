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

from pfscale_gdb import tasks, util


PAGE_SHIFT = 12
PTRS = 512
PHYS_MASK = ((1 << 52) - 1) & ~((1 << PAGE_SHIFT) - 1)
USER_TOP = 1 << 47              # 4-level; see Paging.user_top
DIRECT_MAP_DEFAULT = {4: 0xffff888000000000, 5: 0xff11000000000000}
CR4_LA57 = 1 << 12
PROTNONE = 1 << 8

FLAGS = ((0, "present"), (1, "rw"), (2, "user"), (3, "pwt"), (4, "pcd"),
         (5, "accessed"), (6, "dirty"), (7, "huge"), (8, "global"),
         (9, "special"), (10, "uffd-wp"), (11, "soft-dirty"),
         (58, "devmap"), (63, "nx"))

# A non-present, non-none, non-protnone PTE is a swap-format entry
# (arch/x86/include/asm/pgtable_64.h): the type in bits 59-63, the offset
# inverted in bits 9-58 (L1TF), and three flags of its own.
SWP_TYPE_SHIFT = 59
SWP_OFFSET_FIRST_BIT = 9
SWP_OFFSET_MASK = (1 << 50) - 1
SWP_FLAGS = ((1, "soft-dirty"), (2, "uffd-wp"), (3, "exclusive"))
SWP_TYPES = 32                  # 1 << MAX_SWAPFILES_SHIFT
# include/linux/swapops.h: what a PTE marker's offset bits mean
PTE_MARKER_BITS = ((0, "uffd-wp"), (1, "pfscale-busy"))

# name, shift of the address bits that index it
LEVELS4 = (("pgd", 39), ("pud", 30), ("pmd", 21), ("pte", 12))
LEVELS5 = (("pgd", 48), ("p4d", 39), ("pud", 30), ("pmd", 21), ("pte", 12))
SIZES = {30: "1G", 21: "2M", 12: "4K"}


class Paging(object):
    """The guest's paging mode: levels (4 or 5), the table levels walked
    (name, shift), the end of user space, and how the mode was found."""

    def __init__(self, levels, source=""):
        if levels not in (4, 5):
            raise util.PfError("{}-level paging is not supported".format(
                levels))
        self.levels = levels
        self.source = source
        self.table = LEVELS5 if levels == 5 else LEVELS4
        self.user_top = 1 << (56 if levels == 5 else 47)


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
    return Paging(5 if la57 or l5 else 4, ", ".join(src))


def page_offset_base(paging=None):
    try:
        return int(gdb.parse_and_eval("page_offset_base")) & (2**64 - 1)
    except gdb.error:
        return DIRECT_MAP_DEFAULT[paging.levels if paging else 4]


def is_leaf(entry, shift):
    """A present entry that maps a page: a pte, or a huge pud/pmd."""
    return shift == PAGE_SHIFT or (shift in (30, 21) and entry >> 7 & 1)


_swap_kinds = None


def swap_kinds():
    """{type: kind} of the swap types that are not swap files in this
    kernel, counted down from 31 as include/linux/swap.h allocates them:
    swapin-error, pte-marker (CONFIG_PTE_MARKER), 4 device-private types,
    3 migration types, hwpoison. MAX_SWAPFILES is the length of the
    kernel's swap_info[]; the config options show as symbols."""
    global _swap_kinds
    if _swap_kinds is not None:
        return _swap_kinds
    migration = 3 if util.have_symbol("migrate_pages") else 0
    hwpoison = 1 if util.have_symbol("memory_failure") else 0
    try:
        max_files = int(gdb.parse_and_eval(
            "sizeof(swap_info) / sizeof(swap_info[0])"))
        rest = SWP_TYPES - max_files - 1 - migration - hwpoison
    except gdb.error:           # no CONFIG_SWAP: no swap_info[]
        rest = 1 if util.have_symbol("handle_pte_marker") else 0
        max_files = SWP_TYPES - 1 - rest - migration - hwpoison
    device = 4 if rest >= 4 else 0
    names = (["hwpoison"] * hwpoison +
             ["migration-read", "migration-read-exclusive",
              "migration-write"][:migration] +
             ["device-write", "device-read", "device-exclusive-write",
              "device-exclusive-read"][:device] +
             ["pte-marker"] * (rest - device) + ["swapin-error"])
    _swap_kinds = dict((max_files + i, n) for i, n in enumerate(names))
    return _swap_kinds


def swap_entry(entry):
    """Decode a swap-format PTE: {"kind", "type", "offset", "flags"}, and
    "pfn" for migration/device/hwpoison entries, "marker" for markers."""
    swp_type = entry >> SWP_TYPE_SHIFT
    offset = ~entry >> SWP_OFFSET_FIRST_BIT & SWP_OFFSET_MASK
    kind = swap_kinds().get(swp_type, "swap")
    r = {"kind": kind, "type": swp_type, "offset": offset,
         "flags": [n for bit, n in SWP_FLAGS if entry >> bit & 1]}
    if kind == "pte-marker":
        r["marker"] = [n for bit, n in PTE_MARKER_BITS if offset >> bit & 1]
    elif kind.startswith("migration"):
        # A migration entry keeps the PTE's young/dirty bits above the pfn
        # (SWP_PFN_BITS = MAX_PHYSMEM_BITS - PAGE_SHIFT).
        pfn_bits = (52 if kernel_l5() else 46) - PAGE_SHIFT
        r["pfn"] = offset & ((1 << pfn_bits) - 1)
        r["flags"] += [n for bit, n in ((pfn_bits, "young"),
                                         (pfn_bits + 1, "dirty"))
                       if offset >> bit & 1]
    elif kind != "swap" and kind != "swapin-error":
        r["pfn"] = offset
    return r


def format_swap(r):
    if r["kind"] == "swap":
        text = "swap entry type {} offset 0x{:x}".format(r["type"],
                                                          r["offset"])
    elif r["kind"] == "pte-marker":
        text = "pte marker {}".format(" ".join(r["marker"]) or
                                      "0x{:x}".format(r["offset"]))
    elif "pfn" in r:
        text = "{} entry pfn 0x{:x}".format(r["kind"], r["pfn"])
    else:
        text = "{} entry".format(r["kind"])
    return text + "".join(" " + f for f in r["flags"])


def nonpresent(entry):
    """A non-present entry's kind: None (none), "protnone", or the decoded
    swap-format entry."""
    if entry == 0:
        return None
    if entry & PROTNONE:
        return "protnone"
    return swap_entry(entry)


def flag_names(entry):
    if not entry & 1:
        what = nonpresent(entry)
        if what is None:
            return "not present: none"
        if what == "protnone":
            return "not present: protnone"
        return "not present: " + format_swap(what)
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


def walk_tables(table, addr, paging, read=read_entry):
    """Walk addr from the top table at physical address table; return
    ([(level, idx, entry_phys_addr, entry)], result) where result is
    (phys, shift) of the mapped page or None if not present."""
    steps = []
    for name, shift in paging.table:
        idx = addr >> shift & (PTRS - 1)
        entry = read(table, idx)
        steps.append((name, idx, table + idx * 8, entry))
        if not entry & 1:
            return steps, None
        if is_leaf(entry, shift):
            return steps, (entry_phys(entry, shift) +
                           (addr & ((1 << shift) - 1)), shift)
        table = entry_phys(entry, PAGE_SHIFT)
    return steps, None


def walk(mm, addr, paging=None):
    """walk_tables() for mm; the entry addresses are direct-map addresses."""
    paging = paging or detect()
    steps, result = walk_tables(pgd_phys(mm), addr, paging)
    base = page_offset_base(paging)
    return [(n, i, base + p, e) for n, i, p, e in steps], result


def present_leaves(table_phys, level, lo, hi, base, out, paging,
                   read=read_table, absent=None):
    """Append (va, pfn, npages, shift) of every present leaf in [lo, hi)
    under the table at table_phys (level index into paging.table), which
    maps from virtual address base. With a dict absent, count the
    non-present, non-none PTEs in it by kind (swap, pte-marker, ...)."""
    name, shift = paging.table[level]
    entries = read(table_phys)
    size = 1 << shift
    first = max(0, (lo - base) >> shift)
    last = min(PTRS - 1, (hi - 1 - base) >> shift)
    for idx in range(first, last + 1):
        entry = entries[idx]
        if not entry & 1:
            if absent is not None and entry and shift == PAGE_SHIFT:
                what = nonpresent(entry)
                kind = what if what == "protnone" else what["kind"]
                absent[kind] = absent.get(kind, 0) + 1
            continue
        va = base + idx * size
        if is_leaf(entry, shift):
            s = max(va, lo & ~((1 << PAGE_SHIFT) - 1))
            e = min(va + size, hi)
            pfn = (entry_phys(entry, shift) + (s - va)) >> PAGE_SHIFT
            out.append((s, pfn, (e - s + (1 << PAGE_SHIFT) - 1) >>
                        PAGE_SHIFT, shift))
        else:
            present_leaves(entry_phys(entry, PAGE_SHIFT), level + 1,
                           max(lo, va), min(hi, va + size), va, out, paging,
                           read, absent)


def merge_runs(leaves):
    """Merge leaves that are contiguous both virtually and physically into
    (va, pfn, npages, {shift: leaves}) runs."""
    runs = []
    for va, pfn, n, shift in leaves:
        if runs:
            rva, rpfn, rn, kinds = runs[-1]
            if rva + (rn << PAGE_SHIFT) == va and rpfn + rn == pfn:
                kinds[shift] = kinds.get(shift, 0) + 1
                runs[-1] = (rva, rpfn, rn + n, kinds)
                continue
        runs.append((va, pfn, n, {shift: 1}))
    return runs


def range_runs(pgd, start, end, paging, read=read_table, absent=None):
    leaves = []
    present_leaves(pgd, 0, start, end, 0, leaves, paging, read, absent)
    return merge_runs(leaves)


def leaf_kinds(kinds):
    """'2M x1' for the huge leaves of a run ('' if all 4K)."""
    return ", ".join("{} x{}".format(SIZES[s], kinds[s])
                     for s in sorted(kinds, reverse=True) if s != PAGE_SHIFT)


def step_json(name, idx, at, entry):
    r = {"level": name, "index": idx, "at": "0x{:x}".format(at),
         "entry": "0x{:016x}".format(entry), "flags": flag_names(entry)}
    what = nonpresent(entry) if not entry & 1 else None
    if isinstance(what, dict):
        r["swap"] = what
    return r


class PfWalk(gdb.Command):
    """Walk the page tables for a user virtual address.

pf-walk ADDR [PID] [--json]: walk ADDR in the mm of task PID (default: the
current task) through pgd -> p4d -> pud -> pmd -> pte, printing each
level's entry and its decoded flags (present, rw, user, accessed, dirty,
huge, nx, special, soft-dirty, uffd-wp, ...), and the physical address and
PFN it maps to. A non-present entry is none, protnone, or a swap-format
entry decoded by kind: a swap entry (type, offset), a migration, device or
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
                 "steps": [step_json(n, i, v, e) for n, i, v, e in steps],
                 "present": result is not None}
            if result is not None:
                r.update({"phys": "0x{:x}".format(result[0]),
                          "pfn": result[0] >> PAGE_SHIFT,
                          "page_size": SIZES[result[1]],
                          "leaf_level": steps[-1][0]})
            util.write_json(r)
            return
        gdb.write("pf-walk 0x{:x} pid {} ({}) mm 0x{:x} pgd 0x{:x} levels {}"
                  "\n".format(addr, pid, task["comm"].string(), int(mm),
                              int(mm["pgd"]), paging.levels))
        for name, idx, va, entry in steps:
            gdb.write("  {}[{:3}] @0x{:x} = 0x{:016x} [{}]\n".format(
                name, idx, va, entry, flag_names(entry)))
            if name == "pgd" and paging.levels == 4:
                gdb.write("  p4d        (folded into the pgd)\n")
        if result is None:
            gdb.write("pf-walk: 0x{:x} not mapped ({} not present)\n".format(
                addr, steps[-1][0]))
            return
        phys, shift = result
        gdb.write("  => phys 0x{:x} pfn={} (0x{:x}) page {}{}\n".format(
            phys, phys >> PAGE_SHIFT, phys >> PAGE_SHIFT, SIZES[shift],
            "" if shift == PAGE_SHIFT else " (huge {})".format(
                steps[-1][0])))


class PfRange(gdb.Command):
    """List the present mappings of a user address range.

pf-range START END [PID] [--json]: the present pages of [START, END) in the
mm of task PID (default: the current task) as merged runs, "VSTART-VEND ->
pfn FIRST-LAST (N pages)", where a run is virtually and physically
contiguous and its huge leaves are counted ("; 2M x1"); then the total,
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
        runs = range_runs(pgd_phys(mm), start, end, paging, absent=absent)
        total = sum(r[2] for r in runs)
        if "--json" in opts:
            util.write_json({
                "pid": pid, "start": "0x{:x}".format(start),
                "end": "0x{:x}".format(end), "levels": paging.levels,
                "runs": [{"start": "0x{:x}".format(va),
                          "end": "0x{:x}".format(va + (n << PAGE_SHIFT)),
                          "pfn": pfn, "pages": n,
                          "leaves": {SIZES[s]: c for s, c in kinds.items()}}
                         for va, pfn, n, kinds in runs],
                "present_pages": total, "not_present": absent})
            return
        for va, pfn, n, kinds in runs:
            huge = leaf_kinds(kinds)
            gdb.write("0x{:x}-0x{:x} -> pfn 0x{:x}-0x{:x} ({} pages{})\n"
                      .format(va, va + (n << PAGE_SHIFT), pfn, pfn + n - 1, n,
                              "; " + huge if huge else ""))
        gdb.write("pf-range: pid {} 0x{:x}-0x{:x}: {} present pages in {} "
                  "runs{}\n".format(pid, start, end, total, len(runs),
                                    "; not present: " + ", ".join(
                                        "{} x{}".format(k, absent[k])
                                        for k in sorted(absent))
                                    if absent else ""))


PfWalk()
PfRange()
