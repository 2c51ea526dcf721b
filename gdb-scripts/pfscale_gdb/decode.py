#
# pfscale gdb helpers: what the fields mean, as pure functions
#
# No gdb here: page-table entries, swap-format entries, page-table walks
# over a read callback, runs, VMA permission letters and pgoff. What they
# need of a particular kernel (flag values, MAX_SWAPFILES, ...) comes in
# as arguments; layout.py reads it from the kernel. The rules are those of
# docs/debuggers.md ("One rule per field"), which crash/pfscale.c follows
# too; tests/host/decode.py tests them with plain python3.
#

PAGE_SHIFT = 12
PTRS = 512
PHYS_MASK = ((1 << 52) - 1) & ~((1 << PAGE_SHIFT) - 1)
PRESENT = 1 << 0
PSE = 1 << 7
# x86's _PAGE_PROTNONE is the global bit, which user PTEs never have: with
# PRESENT clear it marks a PROT_NONE (or NUMA-hinting) entry, which the
# kernel's pte_present() counts as present (it maps a page; pagemap shows
# its PFN, RSS counts it).
PROTNONE = 1 << 8
# _PAGE_SPECIAL: a PTE without a struct page behind it (the zero page, PFN
# maps); present, but not in RSS or smaps' Rss (vm_normal_page() is NULL).
SPECIAL = 1 << 9

FLAGS = ((0, "present"), (1, "rw"), (2, "user"), (3, "pwt"), (4, "pcd"),
         (5, "accessed"), (6, "dirty"), (7, "huge"), (8, "global"),
         (9, "special"), (10, "uffd-wp"), (11, "soft-dirty"),
         (58, "devmap"), (63, "nx"))

# A swap-format entry (not present, not none, not protnone;
# arch/x86/include/asm/pgtable_64.h): the type in bits 59-63, the offset
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


class DecodeError(Exception):
    """Input that cannot be decoded (a user error for the commands)."""


class Paging(object):
    """The guest's paging mode: levels (4 or 5), the table levels walked
    (name, shift), the end of user space, and how the mode was found."""

    def __init__(self, levels, source=""):
        if levels not in (4, 5):
            raise DecodeError("{}-level paging is not supported".format(
                levels))
        self.levels = levels
        self.source = source
        self.table = LEVELS5 if levels == 5 else LEVELS4
        self.user_top = 1 << (56 if levels == 5 else 47)
        # SWP_PFN_BITS = MAX_PHYSMEM_BITS - PAGE_SHIFT
        self.swp_pfn_bits = (52 if levels == 5 else 46) - PAGE_SHIFT


def is_present(entry):
    """pte_present()/pmd_present(): mapped, PROT_NONE included."""
    return bool(entry & (PRESENT | PROTNONE))


def is_leaf(entry, shift):
    """A present entry that maps a page: a pte, or a huge pud/pmd."""
    return shift == PAGE_SHIFT or (shift in (30, 21) and bool(entry & PSE))


def entry_phys(entry, shift):
    """Physical address an entry points to (a table, or a page of 2**shift).
    A PROT_NONE entry keeps its PFN inverted (the L1TF mitigation,
    arch/x86/include/asm/pgtable-invert.h), as every non-present one."""
    if entry and not entry & PRESENT:
        entry = ~entry
    return entry & PHYS_MASK & ~((1 << shift) - 1)


def swap_kinds(max_swapfiles, migration=3, hwpoison=1, device=None):
    """{type: kind} of the swap types that are not swap files, allotted
    upwards from MAX_SWAPFILES as include/linux/swap.h does: hwpoison,
    3 migration types, 4 device-private types, pte-marker, swapin-error
    (31), each only if configured. Without device=, the device types are
    there if the types left over leave room for them."""
    rest = SWP_TYPES - max_swapfiles - 1 - migration - hwpoison
    if rest < 0:
        raise DecodeError("MAX_SWAPFILES {} leaves no room for {} special "
                          "swap types".format(max_swapfiles,
                                              1 + migration + hwpoison))
    if device is None:
        device = 4 if rest >= 4 else 0
    names = (["hwpoison"] * hwpoison +
             ["migration-read", "migration-read-exclusive",
              "migration-write"][:migration] +
             ["device-write", "device-read", "device-exclusive-write",
              "device-exclusive-read"][:device] +
             ["pte-marker"] * (rest - device) + ["swapin-error"])
    return dict((max_swapfiles + i, n) for i, n in enumerate(names))


def swap_entry(entry, kinds, swp_pfn_bits=46 - PAGE_SHIFT):
    """Decode a swap-format PTE: {"kind", "type", "offset", "flags"}, and
    "pfn" for migration/device/hwpoison entries, "marker" for markers.
    kinds: swap_kinds() of the kernel; a type not in it is a swap file's
    ("swap")."""
    swp_type = entry >> SWP_TYPE_SHIFT
    offset = ~entry >> SWP_OFFSET_FIRST_BIT & SWP_OFFSET_MASK
    kind = kinds.get(swp_type, "swap")
    r = {"kind": kind, "type": swp_type, "offset": offset,
         "flags": [n for bit, n in SWP_FLAGS if entry >> bit & 1]}
    if kind == "pte-marker":
        r["marker"] = [n for bit, n in PTE_MARKER_BITS if offset >> bit & 1]
    elif kind.startswith("migration"):
        # A migration entry keeps the PTE's young/dirty bits above the pfn.
        r["pfn"] = offset & ((1 << swp_pfn_bits) - 1)
        r["flags"] += [n for bit, n in ((swp_pfn_bits, "young"),
                                         (swp_pfn_bits + 1, "dirty"))
                       if offset >> bit & 1]
    elif kind not in ("swap", "swapin-error"):
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


def nonpresent(entry, kinds, swp_pfn_bits=46 - PAGE_SHIFT):
    """A non-present entry: None for none (0), else its decoded swap
    entry (swap_entry())."""
    if entry == 0:
        return None
    return swap_entry(entry, kinds, swp_pfn_bits)


def flag_names(entry, kinds, swp_pfn_bits=46 - PAGE_SHIFT):
    """The decoded entry as pf-walk prints it."""
    if entry & PRESENT:
        return " ".join(n for bit, n in FLAGS if entry >> bit & 1)
    if entry & PROTNONE:
        return "protnone " + " ".join(n for bit, n in FLAGS
                                      if bit != 8 and entry >> bit & 1)
    what = nonpresent(entry, kinds, swp_pfn_bits)
    if what is None:
        return "not present: none"
    return "not present: " + format_swap(what)


def walk_tables(table, addr, paging, read):
    """Walk addr from the top table at physical address table, reading
    entries with read(table_phys, index); return ([(level, idx,
    entry_phys_addr, entry)], result) where result is (phys, shift) of the
    mapped page or None if not present."""
    steps = []
    for name, shift in paging.table:
        idx = addr >> shift & (PTRS - 1)
        entry = read(table, idx)
        steps.append((name, idx, table + idx * 8, entry))
        if not is_present(entry):
            return steps, None
        if is_leaf(entry, shift):
            return steps, (entry_phys(entry, shift) +
                           (addr & ((1 << shift) - 1)), shift)
        table = entry_phys(entry, PAGE_SHIFT)
    return steps, None


def present_leaves(table_phys, level, lo, hi, base, out, paging, read,
                   kinds, absent=None):
    """Append (va, pfn, npages, shift, special) of every present leaf in
    [lo, hi) (special: how many of its pages are _PAGE_SPECIAL ptes)
    under the table at table_phys (level index into paging.table), which
    maps from virtual address base; read(table_phys) gives its 512
    entries. With a dict absent, count the non-present, non-none PTEs in
    it by kind (swap, pte-marker, ...)."""
    _, shift = paging.table[level]
    entries = read(table_phys)
    size = 1 << shift
    first = max(0, (lo - base) >> shift)
    last = min(PTRS - 1, (hi - 1 - base) >> shift)
    for idx in range(first, last + 1):
        entry = entries[idx]
        if not is_present(entry):
            if absent is not None and entry and shift == PAGE_SHIFT:
                kind = swap_entry(entry, kinds)["kind"]
                absent[kind] = absent.get(kind, 0) + 1
            continue
        va = base + idx * size
        if is_leaf(entry, shift):
            s = max(va, lo & ~((1 << PAGE_SHIFT) - 1))
            e = min(va + size, hi)
            pfn = (entry_phys(entry, shift) + (s - va)) >> PAGE_SHIFT
            n = (e - s + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT
            out.append((s, pfn, n, shift,
                        n if shift == PAGE_SHIFT and entry & SPECIAL else 0))
        else:
            present_leaves(entry_phys(entry, PAGE_SHIFT), level + 1,
                           max(lo, va), min(hi, va + size), va, out, paging,
                           read, kinds, absent)


def merge_runs(leaves):
    """A run: present pages contiguous both virtually and in PFN (what
    pagemap shows as consecutive PFNs). Merge (va, pfn, npages, shift,
    special) leaves into (va, pfn, npages, {shift: leaves}, special)
    runs."""
    runs = []
    for va, pfn, n, shift, special in leaves:
        if runs:
            rva, rpfn, rn, kinds, rspecial = runs[-1]
            if rva + (rn << PAGE_SHIFT) == va and rpfn + rn == pfn:
                kinds[shift] = kinds.get(shift, 0) + 1
                runs[-1] = (rva, rpfn, rn + n, kinds, rspecial + special)
                continue
        runs.append((va, pfn, n, {shift: 1}, special))
    return runs


def range_runs(pgd, start, end, paging, read, kinds, absent=None):
    leaves = []
    present_leaves(pgd, 0, start, end, 0, leaves, paging, read, kinds,
                   absent)
    return merge_runs(leaves)


def runs_from_pagemap(pages):
    """The runs of [(va, pfn or None)] in address order: the same rule as
    merge_runs(), for /proc/PID/pagemap's view."""
    return [(va, pfn, n) for va, pfn, n, _, _ in merge_runs(
        [(va, pfn, 1, PAGE_SHIFT, 0) for va, pfn in pages
         if pfn is not None])]


def leaf_kinds(kinds):
    """'2M x1' for the huge leaves of a run ('' if all 4K)."""
    return ", ".join("{} x{}".format(SIZES[s], kinds[s])
                     for s in sorted(kinds, reverse=True) if s != PAGE_SHIFT)


def perms(flags, vm):
    """/proc/PID/maps's four letters: r, w, x from VM_READ, VM_WRITE,
    VM_EXEC, and s from VM_MAYSHARE (a MAP_SHARED mapping of a read-only
    file has VM_MAYSHARE without VM_SHARED), else p. vm: {"read", "write",
    "exec", "mayshare"} -> flag value."""
    return "".join((
        "r" if flags & vm["read"] else "-",
        "w" if flags & vm["write"] else "-",
        "x" if flags & vm["exec"] else "-",
        "s" if flags & vm["mayshare"] else "p"))


def pgoff_bytes(vm_pgoff, has_file):
    """/proc/PID/maps's offset: vm_pgoff in bytes for a file VMA, 0 for
    any other (anonymous VMAs keep their address >> PAGE_SHIFT there)."""
    return vm_pgoff << PAGE_SHIFT if has_file else 0
