#
# pfscale gdb helpers: what the fields mean, as pure functions
#
# No gdb here: page-table entries, swap-format entries, page-table walks
# over a read callback, runs, VMA permission letters and pgoff. What they
# need of a particular kernel comes in as arguments: a Layout of its
# #define values (layout.py reads its pfscale-layout) and the Paging mode
# it runs in. The rules are those of
# docs/debuggers.md ("One rule per field"), which crash/pfscale.c follows
# too; tests/host/decode.py tests them with plain python3.
#

import os
import re

# What the kernel's #defines say (x86 PTE and swap-entry bits, swap types,
# maple and rwsem encodings) is not in the debug info: Layout() takes it
# from pfscale-layout, the values scripts/layout.sh has the compiler
# evaluate at kernel build time. Which names there are, which are required
# and their bounds are scripts/layout.def's (crash/pfscale.c includes the
# same file); only meanings are kept here.
FLAG_BITS = (("_PAGE_BIT_PRESENT", "present"), ("_PAGE_BIT_RW", "rw"),
             ("_PAGE_BIT_USER", "user"), ("_PAGE_BIT_PWT", "pwt"),
             ("_PAGE_BIT_PCD", "pcd"), ("_PAGE_BIT_ACCESSED", "accessed"),
             ("_PAGE_BIT_DIRTY", "dirty"), ("_PAGE_BIT_PSE", "huge"),
             ("_PAGE_BIT_GLOBAL", "global"),
             ("_PAGE_BIT_SPECIAL", "special"),
             ("_PAGE_BIT_UFFD_WP", "uffd-wp"),
             ("_PAGE_BIT_SOFT_DIRTY", "soft-dirty"),
             ("_PAGE_BIT_DEVMAP", "devmap"), ("_PAGE_BIT_NX", "nx"))
# A swap-format entry's own flags (masks; 0 when not configured)
SWP_FLAG_MASKS = (("_PAGE_SWP_SOFT_DIRTY", "soft-dirty"),
                  ("_PAGE_SWP_UFFD_WP", "uffd-wp"),
                  ("_PAGE_SWP_EXCLUSIVE", "exclusive"))
# include/linux/swapops.h: what a PTE marker's offset bits mean
PTE_MARKERS = (("PTE_MARKER_UFFD_WP", "uffd-wp"),
               ("PTE_MARKER_PFSCALE_BUSY", "pfscale-busy"))

# This file is gdb-scripts/pfscale_gdb/decode.py of the clone, which
# gdb-scripts/pfscale.py is sourced from.
SCHEMA_PATH = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
    "layout.def"))
# One entry of layout.def, exactly as that file's header describes it
SCHEMA_LINE = re.compile(
    r"LAYOUT_ITEM\((\w+), (REQUIRED|OPTIONAL), "
    r"(NEED_(?:PTE|VMA)(?: \| NEED_(?:PTE|VMA))*), "
    r"(0x[0-9a-f]+|[0-9]+), (0x[0-9a-f]+|[0-9]+)\)$")
U64_MAX = 2**64 - 1


class DecodeError(Exception):
    """Input that cannot be decoded (a user error for the commands)."""


class SchemaEntry(object):
    """A name of pfscale-layout as layout.def lists it: required or not,
    the command groups (pte, vma) that need it, its bounds lo..hi."""

    def __init__(self, name, required, groups, lo, hi):
        self.name, self.required, self.groups = name, required, groups
        self.lo, self.hi = lo, hi


def parse_schema(text, source=SCHEMA_PATH):
    """The SchemaEntry list of layout.def's text, in order. Only C
    comments, blank lines and LAYOUT_ITEM lines may be there: anything
    else is an error, never skipped."""
    # blank the comments out, keeping their newlines for the line numbers
    uncommented = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"),
                         text, flags=re.S)
    entries, seen = [], set()
    for n, line in enumerate(uncommented.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        m = SCHEMA_LINE.match(line)
        if not m:
            raise DecodeError(
                "{} line {}: not LAYOUT_ITEM(NAME, REQUIRED|OPTIONAL, "
                "NEED_PTE|NEED_VMA, MIN, MAX): {!r}".format(source, n, line))
        name, kind, groups, lo, hi = m.groups()
        lo, hi = int(lo, 0), int(hi, 0)
        if name in seen or not lo <= hi <= U64_MAX:
            raise DecodeError("{} line {}: {} listed twice or its bounds "
                              "{}..{} are off".format(source, n, name, lo,
                                                      hi))
        seen.add(name)
        entries.append(SchemaEntry(
            name, kind == "REQUIRED",
            tuple(g[len("NEED_"):].lower() for g in groups.split(" | ")),
            lo, hi))
    if not entries:
        raise DecodeError("{} lists no LAYOUT_ITEM".format(source))
    return entries


_schema = []


def schema():
    """layout.def's entries, read once."""
    if not _schema:
        try:
            with open(SCHEMA_PATH) as f:
                text = f.read()
        except (IOError, OSError) as e:
            raise DecodeError("cannot read {} ({})".format(
                SCHEMA_PATH, e.strerror or e))
        _schema.extend(parse_schema(text))
    return _schema


# The table levels, top down; each indexes PTRS_PER_PTE entries, the last
# from PAGE_SHIFT up (Paging derives their shifts)
LEVELS4 = ("pgd", "pud", "pmd", "pte")
LEVELS5 = ("pgd", "p4d", "pud", "pmd", "pte")
SIZES = {30: "1G", 21: "2M", 12: "4K"}      # the page sizes x86-64 maps


def parse_layout(text, source="pfscale-layout"):
    """{NAME: value} of a pfscale-layout file's text ("NAME VALUE" lines,
    '#' comments)."""
    values = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        try:
            if len(words) != 2:
                raise ValueError(line)
            values[words[0]] = int(words[1]) & (2**64 - 1)
        except ValueError:
            raise DecodeError("{} line {}: not 'NAME VALUE': {!r}".format(
                source, n, line))
    return values


def layout_build_id(text):
    """The GNU build-id of the vmlinux that scripts/layout.sh wrote the
    file for (its "# build-id HEX" line), None in older files."""
    m = re.search(r"^# build-id ([0-9a-f]+)$", text, re.M)
    return m.group(1) if m else None


def signed64(value):
    """value as the C readers print a long (pfscale-layout's own form)."""
    return value - 2**64 if value >> 63 else value


def check_values(values, source, entries):
    """Refuse pfscale-layout values that crash/pfscale.c refuses too: a
    required name of layout.def missing, a value out of its bounds, and
    values that contradict one another."""
    known = set(e.name for e in entries)
    unknown = [n for n, _ in FLAG_BITS + SWP_FLAG_MASKS + PTE_MARKERS
               if n not in known]
    if unknown:
        raise DecodeError("{} lacks {}, which decode.py gives a meaning "
                          "to".format(SCHEMA_PATH, ", ".join(unknown)))
    missing = [e.name for e in entries
               if e.required and e.name not in values]
    if missing:
        raise DecodeError("{} lacks {}".format(source, ", ".join(missing)))
    for e in entries:
        if e.name in values and not e.lo <= values[e.name] <= e.hi:
            raise DecodeError("{}: {} {} is out of bounds".format(
                source, e.name, signed64(values[e.name])))
    if (values["__PHYSICAL_MASK_SHIFT"] <= values["PAGE_SHIFT"] or
            values["PTRS_PER_PTE"] & (values["PTRS_PER_PTE"] - 1)):
        raise DecodeError("{}: __PHYSICAL_MASK_SHIFT {} or PTRS_PER_PTE {} "
                          "is off".format(source,
                                          values["__PHYSICAL_MASK_SHIFT"],
                                          values["PTRS_PER_PTE"]))


def bit_of(mask):
    return mask.bit_length() - 1


class Layout(object):
    """A kernel's layout facts from its pfscale-layout values, and the
    masks and tables derived from them: page size, PTE flag bits, the
    swap-entry format, the swap types, the maple and rwsem encodings."""

    def __init__(self, values, source="pfscale-layout", entries=None):
        check_values(values, source, entries or schema())
        v = self.values = dict(values)
        self.page_shift = v["PAGE_SHIFT"]
        self.ptrs = v["PTRS_PER_PTE"]
        # every x86-64 table level indexes PTRS_PER_PTE entries: each
        # level up maps level_bits more address bits
        self.level_bits = bit_of(self.ptrs)
        self.phys_mask = (((1 << v["__PHYSICAL_MASK_SHIFT"]) - 1) &
                          ~((1 << self.page_shift) - 1))
        self.present = 1 << v["_PAGE_BIT_PRESENT"]
        self.pse = 1 << v["_PAGE_BIT_PSE"]
        # x86's _PAGE_PROTNONE is the global bit, which user PTEs never
        # have: with PRESENT clear it marks a PROT_NONE (or NUMA-hinting)
        # entry, which pte_present() counts as present (it maps a page;
        # pagemap shows its PFN, RSS counts it).
        self.protnone_bit = v["_PAGE_BIT_PROTNONE"]
        self.protnone = 1 << self.protnone_bit
        # _PAGE_SPECIAL: no struct page behind it (the zero page, PFN
        # maps); present, but not in RSS or smaps' Rss.
        self.special = 1 << v["_PAGE_BIT_SPECIAL"]
        self.flags = tuple((v[n], name) for n, name in FLAG_BITS)
        # arch/x86/include/asm/pgtable_64.h: the type in the top
        # SWP_TYPE_BITS, the offset inverted (L1TF) from
        # SWP_OFFSET_FIRST_BIT up to the type.
        self.swp_type_shift = 64 - v["SWP_TYPE_BITS"]
        self.swp_offset_first_bit = v["SWP_OFFSET_FIRST_BIT"]
        self.swp_offset_mask = (1 << (self.swp_type_shift -
                                      self.swp_offset_first_bit)) - 1
        self.swp_flags = tuple((bit_of(v[n]), name)
                               for n, name in SWP_FLAG_MASKS if v.get(n))
        self.pte_markers = tuple((bit_of(v[n]), name)
                                 for n, name in PTE_MARKERS if v.get(n))
        self.swap_kinds = swap_kinds(v)

    def __getitem__(self, name):
        return self.values[name]


def swap_kinds(v):
    """{type: kind} of the swap types that are not swap files, allotted
    upwards from MAX_SWAPFILES as include/linux/swap.h does: hwpoison,
    3 migration types, 4 device-private types, pte-marker, swapin-error
    (the last), as many of each as the kernel's SWP_*_NUM say."""
    groups = (("SWP_HWPOISON_NUM", ["hwpoison"]),
              ("SWP_MIGRATION_NUM", ["migration-read",
                                     "migration-read-exclusive",
                                     "migration-write"]),
              ("SWP_DEVICE_NUM", ["device-write", "device-read",
                                  "device-exclusive-write",
                                  "device-exclusive-read"]),
              ("SWP_PTE_MARKER_NUM", ["pte-marker"]),
              ("SWP_SWAPIN_ERROR_NUM", ["swapin-error"]))
    # swap.h has each group whole or not at all
    names = sum((group[:v[num]] for num, group in groups), [])
    first = v["MAX_SWAPFILES"]
    if (any(v[num] > len(group) for num, group in groups) or
            v["MAX_SWAPFILES_SHIFT"] > v["SWP_TYPE_BITS"] or
            first + len(names) != 1 << v["MAX_SWAPFILES_SHIFT"]):
        raise DecodeError("MAX_SWAPFILES {} and {} special swap types do not "
                          "fill {} types (within SWP_TYPE_BITS {})".format(
                              first, len(names),
                              1 << v["MAX_SWAPFILES_SHIFT"],
                              v["SWP_TYPE_BITS"]))
    return dict((first + i, n) for i, n in enumerate(names))


class Paging(object):
    """The guest's paging mode: levels (4 or 5), the table levels walked
    (name, shift), the end of user space, and how the mode was found; and
    the kernel's Layout, which decodes the entries."""

    def __init__(self, levels, lay, source=""):
        if levels not in (4, 5):
            raise DecodeError("{}-level paging is not supported".format(
                levels))
        self.levels = levels
        self.layout = lay
        self.source = source
        names = LEVELS5 if levels == 5 else LEVELS4
        bits = lay.level_bits
        # (name, shift of the address bits that index it): pte from
        # PAGE_SHIFT, each level up PTRS_PER_PTE times more
        self.table = tuple((n, lay.page_shift + bits * (levels - 1 - i))
                           for i, n in enumerate(names))
        # user space: the lower half of what the top level maps
        self.user_top = 1 << (self.table[0][1] + bits - 1)
        # SWP_PFN_BITS = MAX_PHYSMEM_BITS - PAGE_SHIFT; MAX_PHYSMEM_BITS
        # depends on the paging mode at run time
        self.swp_pfn_bits = (52 if levels == 5 else 46) - lay.page_shift


def is_present(entry, lay):
    """pte_present()/pmd_present(): mapped, PROT_NONE included."""
    return bool(entry & (lay.present | lay.protnone))


def is_leaf(entry, shift, lay):
    """A present entry that maps a page: a pte, or a huge pud/pmd (the two
    levels above the pte)."""
    return shift == lay.page_shift or (
        shift <= lay.page_shift + 2 * lay.level_bits and bool(entry & lay.pse))


def entry_phys(entry, shift, lay):
    """Physical address an entry points to (a table, or a page of 2**shift).
    A PROT_NONE entry keeps its PFN inverted (the L1TF mitigation,
    arch/x86/include/asm/pgtable-invert.h), as every non-present one."""
    if entry and not entry & lay.present:
        entry = ~entry
    return entry & lay.phys_mask & ~((1 << shift) - 1)


def swap_entry(entry, paging):
    """Decode a swap-format PTE: {"kind", "type", "offset", "flags"}, and
    "pfn" for migration/device/hwpoison entries, "marker" for markers.
    A type that is not one of the kernel's special types is a swap
    file's ("swap")."""
    lay = paging.layout
    swp_type = entry >> lay.swp_type_shift
    offset = ~entry >> lay.swp_offset_first_bit & lay.swp_offset_mask
    kind = lay.swap_kinds.get(swp_type, "swap")
    r = {"kind": kind, "type": swp_type, "offset": offset,
         "flags": [n for bit, n in lay.swp_flags if entry >> bit & 1]}
    if kind == "pte-marker":
        r["marker"] = [n for bit, n in lay.pte_markers if offset >> bit & 1]
    elif kind.startswith("migration"):
        # A migration entry keeps the PTE's young/dirty bits above the pfn.
        bits = paging.swp_pfn_bits
        r["pfn"] = offset & ((1 << bits) - 1)
        r["flags"] += [n for bit, n in ((bits, "young"), (bits + 1, "dirty"))
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


def nonpresent(entry, paging):
    """A non-present entry: None for none (0), else its decoded swap
    entry (swap_entry())."""
    if entry == 0:
        return None
    return swap_entry(entry, paging)


def flag_names(entry, paging):
    """The decoded entry as pf-walk prints it."""
    lay = paging.layout
    if entry & lay.present:
        return " ".join(n for bit, n in lay.flags if entry >> bit & 1)
    if entry & lay.protnone:
        return "protnone " + " ".join(n for bit, n in lay.flags
                                      if bit != lay.protnone_bit and
                                      entry >> bit & 1)
    what = nonpresent(entry, paging)
    if what is None:
        return "not present: none"
    return "not present: " + format_swap(what)


def walk_tables(table, addr, paging, read):
    """Walk addr from the top table at physical address table, reading
    entries with read(table_phys, index); return ([(level, idx,
    entry_phys_addr, entry)], result) where result is (phys, shift) of the
    mapped page or None if not present."""
    lay = paging.layout
    steps = []
    for name, shift in paging.table:
        idx = addr >> shift & (lay.ptrs - 1)
        entry = read(table, idx)
        steps.append((name, idx, table + idx * 8, entry))
        if not is_present(entry, lay):
            return steps, None
        if is_leaf(entry, shift, lay):
            return steps, (entry_phys(entry, shift, lay) +
                           (addr & ((1 << shift) - 1)), shift)
        table = entry_phys(entry, lay.page_shift, lay)
    return steps, None


def present_leaves(table_phys, level, lo, hi, base, out, paging, read,
                   absent=None):
    """Append (va, pfn, npages, shift, special) of every present leaf in
    [lo, hi) (special: how many of its pages are _PAGE_SPECIAL ptes)
    under the table at table_phys (level index into paging.table), which
    maps from virtual address base; read(table_phys) gives its entries.
    With a dict absent, count the non-present, non-none PTEs in it by
    kind (swap, pte-marker, ...)."""
    lay = paging.layout
    page_shift = lay.page_shift
    _, shift = paging.table[level]
    entries = read(table_phys)
    size = 1 << shift
    first = max(0, (lo - base) >> shift)
    last = min(lay.ptrs - 1, (hi - 1 - base) >> shift)
    for idx in range(first, last + 1):
        entry = entries[idx]
        if not is_present(entry, lay):
            if absent is not None and entry and shift == page_shift:
                kind = swap_entry(entry, paging)["kind"]
                absent[kind] = absent.get(kind, 0) + 1
            continue
        va = base + idx * size
        if is_leaf(entry, shift, lay):
            s = max(va, lo & ~((1 << page_shift) - 1))
            e = min(va + size, hi)
            pfn = (entry_phys(entry, shift, lay) + (s - va)) >> page_shift
            n = (e - s + (1 << page_shift) - 1) >> page_shift
            special = shift == page_shift and entry & lay.special
            out.append((s, pfn, n, shift, n if special else 0))
        else:
            present_leaves(entry_phys(entry, page_shift, lay), level + 1,
                           max(lo, va), min(hi, va + size), va, out, paging,
                           read, absent)


def merge_runs(leaves, page_shift):
    """A run: present pages contiguous both virtually and in PFN (what
    pagemap shows as consecutive PFNs). Merge (va, pfn, npages, shift,
    special) leaves into (va, pfn, npages, {shift: leaves}, special)
    runs."""
    runs = []
    for va, pfn, n, shift, special in leaves:
        if runs:
            rva, rpfn, rn, kinds, rspecial = runs[-1]
            if rva + (rn << page_shift) == va and rpfn + rn == pfn:
                kinds[shift] = kinds.get(shift, 0) + 1
                runs[-1] = (rva, rpfn, rn + n, kinds, rspecial + special)
                continue
        runs.append((va, pfn, n, {shift: 1}, special))
    return runs


def range_runs(pgd, start, end, paging, read, absent=None):
    leaves = []
    present_leaves(pgd, 0, start, end, 0, leaves, paging, read, absent)
    return merge_runs(leaves, paging.layout.page_shift)


def runs_from_pagemap(pages, page_shift):
    """The runs of [(va, pfn or None)] in address order: the same rule as
    merge_runs(), for /proc/PID/pagemap's view."""
    return [(va, pfn, n) for va, pfn, n, _, _ in merge_runs(
        [(va, pfn, 1, page_shift, 0) for va, pfn in pages
         if pfn is not None], page_shift)]


def leaf_kinds(kinds):
    """'2M x1' for the huge leaves of a run ('' if all 4K)."""
    return ", ".join("{} x{}".format(SIZES[s], kinds[s])
                     for s in sorted(kinds, reverse=True) if SIZES[s] != "4K")


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


def pgoff_bytes(vm_pgoff, has_file, lay):
    """/proc/PID/maps's offset: vm_pgoff in bytes for a file VMA, 0 for
    any other (anonymous VMAs keep their address >> PAGE_SHIFT there)."""
    return vm_pgoff << lay.page_shift if has_file else 0


# The maple tree (lib/maple_tree.c): a node's slots as mt_dump_node() reads
# them. geo: {"nodes": {type: (pivots offset, npivots, slots offset,
# nslots)}, "dense": type, "leaf": type} (layout.maple() reads it from the
# kernel); words: the node's 64-bit words.
def maple_node(geo, words, mtype, lo, hi):
    """(error, leaf, [(first, last, slot)]) of the node's non-empty slots
    covering [lo, hi]: error "ok", "type" (not a type the geometry has),
    or "pivot@I" (slot I's pivot outside [first, hi]: the slots before it
    are kept); leaf: the slots are entries, else child nodes. A dense
    node's slot i is index lo + i."""
    leaf = mtype in (geo["leaf"], geo["dense"])
    if mtype not in geo["nodes"]:
        return "type", leaf, []
    poff, npiv, soff, nslots = geo["nodes"][mtype]
    # a geometry that reaches past the node is no node's
    if max(soff // 8 + nslots, poff // 8 + npiv) > len(words):
        return "type", leaf, []
    slots = words[soff // 8:soff // 8 + nslots]
    if mtype == geo["dense"]:
        return "ok", leaf, [(lo + i, lo + i, e) for i, e in enumerate(slots)
                            if e and i <= hi - lo]
    pivots = words[poff // 8:poff // 8 + npiv]
    out = []
    first = lo
    for i in range(nslots):
        last = hi
        if i < npiv:
            last = pivots[i]
        elif not slots[i]:      # range_64's last slot may hold the metadata
            break
        if last == 0 and i > 0:
            break
        # mas_validate_limits(): pivots rise and stay within the node
        if last < first or last > hi:
            return "pivot@{}".format(i), leaf, out
        if slots[i]:
            out.append((first, last, slots[i]))
        if last == hi:
            break
        first = last + 1
    return "ok", leaf, out


def xa_is_internal(entry):
    return entry & 3 == 2


MAPLE_MAX_NODES = 1 << 16       # a corrupt tree must not loop


def maple_walk(root, geo, lay, read):
    """Walk a whole maple tree from its ma_root, in index order, as
    mt_dump() does: read(node) gives a node's words (None: unreadable).
    Returns ([(first, last, entry)] of every non-empty leaf slot, internal
    entries too (the caller decides), nodes read, [(what, node, lo, hi)]
    of what is wrong: "deep", "nodes", "unreadable", "type", "pivot@I";
    the walk goes on with the rest."""
    out, bad, nodes = [], [], [0]

    def walk(enode, lo, hi, depth):
        node = enode & ~lay["MAPLE_NODE_MASK"] & U64_MAX
        if depth > lay["MAPLE_HEIGHT_MAX"]:
            return bad.append(("deep", node, lo, hi))
        if nodes[0] >= MAPLE_MAX_NODES:
            return bad.append(("nodes", node, lo, hi))
        words = read(node)
        if words is None:
            return bad.append(("unreadable", node, lo, hi))
        nodes[0] += 1
        mtype = (enode >> lay["MAPLE_NODE_TYPE_SHIFT"]) & \
            lay["MAPLE_NODE_TYPE_MASK"]
        error, leaf, slots = maple_node(geo, words, mtype, lo, hi)
        if error == "type":
            return bad.append(("type", node, lo, hi))
        for first, last, entry in slots:
            if leaf:
                out.append((first, last, entry))
            else:
                walk(entry, first, last, depth + 1)
        if error != "ok":
            bad.append((error, node, lo, hi))

    # xa_is_node(): an internal entry above MAPLE_RESERVED_RANGE
    if root > lay["MAPLE_RESERVED_RANGE"] and xa_is_internal(root):
        walk(root & ~lay["MAPLE_ROOT_NODE"], 0, U64_MAX, 1)
    elif root:      # a single entry at index 0, no node
        out.append((0, 0, root))
    return out, nodes[0], bad


def rwsem_state(count, lay):
    """(state, flags) of an rw_semaphore's count: "write-locked", "read-
    locked by N" (kernel/locking/rwsem.c: readers from RWSEM_READER_SHIFT
    up to bit 62; bit 63 is RWSEM_FLAG_READFAIL) or "unlocked"; flags
    "waiters", "handoff"."""
    readers = (count & (U64_MAX >> 1)) >> lay["RWSEM_READER_SHIFT"]
    if count & lay["RWSEM_WRITER_LOCKED"]:
        state = "write-locked"
    elif readers:
        state = "read-locked by {}".format(readers)
    else:
        state = "unlocked"
    flags = [n for bit, n in ((lay["RWSEM_FLAG_WAITERS"], "waiters"),
                              (lay["RWSEM_FLAG_HANDOFF"], "handoff"))
             if count & bit]
    return state, flags


def qspin_state(val):
    """A qspinlock's val: locked if its locked byte (_Q_LOCKED_MASK) is
    set, which only the owner sets."""
    return "locked" if val & 0xff else "unlocked"


# get_mm_rss(): the MM counters that are RSS (not swapents)
RSS_COUNTERS = ("filepages", "anonpages", "shmempages")


def rss_sum(counters):
    """get_mm_rss() of {short name: value}."""
    return sum(v for n, v in counters.items() if n in RSS_COUNTERS)


def mm_counter_names(enum):
    """[(index, short name)] of the MM counters (MM_FILEPAGES ->
    filepages) of their enum's {enumerator: value}, in index order: the
    MM_ enumerators below NR_MM_COUNTERS."""
    nr = enum.get("NR_MM_COUNTERS", 0)
    return sorted((v, n[3:].lower()) for n, v in enum.items()
                  if n.startswith("MM_") and len(n) > 3 and 0 <= v < nr)


# The VMA flags the readers use, by their names in vmaflag_names[]
# (mm/debug.c, CONFIG_DEBUG_VM). A kernel without that table: the values of
# include/linux/mm.h, which are also smaps' VmFlags (rd, wr, ex, ms) and
# have not changed since 2.6.
VM_FLAG_NAMES = ("read", "write", "exec", "mayshare")
VM_FLAGS_MM_H = {"read": 0x1, "write": 0x2, "exec": 0x4, "mayshare": 0x80}


def vm_flags_from_table(table):
    """({name: value} of VM_FLAG_NAMES, where they were read) from
    vmaflag_names[]'s (name, mask) pairs, or None without the table."""
    if table is None:
        return dict(VM_FLAGS_MM_H), "include/linux/mm.h"
    out = dict((n, m) for n, m in table if n in VM_FLAG_NAMES)
    missing = [n for n in VM_FLAG_NAMES if n not in out]
    if missing:
        raise DecodeError("vmaflag_names[] lacks {}".format(
            ", ".join(missing)))
    return out, "vmaflag_names[]"


DENTRY_DEPTH = 64       # a corrupt d_parent chain must not loop


def dentry_path(names, root):
    """The path of a dentry from its names, leaf first, up to its
    filesystem's root (mounts not crossed); root: the last name is the
    root's, which is not in the path unless alone (shmem's "dev/zero").
    At most DENTRY_DEPTH names."""
    if root and len(names) > 1:
        names = names[:-1]
    names = [n.lstrip("/") for n in names[:DENTRY_DEPTH]]
    return "/" + "/".join(reversed(names))
