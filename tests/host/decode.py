#!/usr/bin/env python3
# Unit test of gdb-scripts/pfscale_gdb/decode.py with plain python3 (no
# gdb, no guest): page-table walks on synthetic tables held in a dict (5
# and 4 levels, a huge pmd with the PAT bit, PROT_NONE entries), the
# swap-format entries of every kind, runs, and the VMA field rules of
# docs/debuggers.md. Prints TAP, one result per check.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "gdb-scripts"))
from pfscale_gdb import decode as d  # noqa: E402

checks = []


def check(name, got, want):
    checks.append((name, got == want, got, want))


mem = {}


def put(table, idx, entry):
    mem.setdefault(table, [0] * 512)[idx] = entry


def entry(t, i):
    return mem.get(t, [0] * 512)[i]


def table(t):
    return mem.get(t, [0] * 512)


def swp(swp_type, offset, flags=0):
    """An x86-64 swap PTE, as __swp_entry() builds it."""
    return swp_type << 59 | (~offset & ((1 << 50) - 1)) << 9 | flags


def protnone(pfn):
    """A PROT_NONE PTE for pfn, as pfn_pte() inverts it (L1TF)."""
    return (~(pfn << 12) & ((1 << 52) - 4096)) | 0x100 | 0x60


# The test kernel's own pfscale-layout (scripts/layout.sh wrote it at
# build time); the entries below are built independently of it.
path = os.environ.get("PFSCALE_LAYOUT") or os.path.join(
    os.environ.get("PFSCALE_ART", "."), "pfscale-layout")
try:
    values = d.parse_layout(open(path).read(), path)
except (IOError, OSError) as e:
    print("1..1\nnot ok - decode: the test kernel's pfscale-layout "
          "({}: {}; set PFSCALE_ART or PFSCALE_LAYOUT)".format(path, e))
    sys.exit(0)
lay = d.Layout(values, path)

check("pfscale-layout: the x86-64 bits as the kernel defines them",
      (lay.page_shift, lay.present, lay.pse, lay.protnone, lay.special,
       lay.swp_type_shift, lay.swp_offset_first_bit, lay.phys_mask),
      (12, 1, 0x80, 0x100, 0x200, 59, 9, 0x000ffffffffff000))
# The kinds of the test kernel (MEMORY_FAILURE, MIGRATION, DEVICE_PRIVATE,
# PTE markers: MAX_SWAPFILES 22), and of a kernel without hwpoison and
# device types (MAX_SWAPFILES 27).
kinds = lay.swap_kinds
check("swap kinds without hwpoison and device types",
      d.swap_kinds(dict(values, MAX_SWAPFILES=27, SWP_HWPOISON_NUM=0,
                        SWP_DEVICE_NUM=0)),
      {27: "migration-read", 28: "migration-read-exclusive",
       29: "migration-write", 30: "pte-marker", 31: "swapin-error"})
check("swap kinds allotted from MAX_SWAPFILES up in the test kernel "
      "(hwpoison, migration, device, marker, swapin-error)", kinds,
      {22: "hwpoison", 23: "migration-read",
       24: "migration-read-exclusive", 25: "migration-write",
       26: "device-write", 27: "device-read",
       28: "device-exclusive-write", 29: "device-exclusive-read",
       30: "pte-marker", 31: "swapin-error"})


def refused(name, fn):
    try:
        fn()
        check(name, "accepted", "refused")
    except d.DecodeError:
        check(name, "refused", "refused")


refused("special swap types that do not fill the swap type space are "
        "refused", lambda: d.swap_kinds(dict(
            values, MAX_SWAPFILES=values["MAX_SWAPFILES"] + 1)))
refused("a pfscale-layout line that is not 'NAME VALUE' is refused",
        lambda: d.parse_layout("PAGE_SHIFT 12\nPTRS_PER_PTE\n"))


def refused_naming(name, fn, words):
    """fn raises DecodeError, with each of words in its message."""
    try:
        fn()
        check(name, "accepted", "refused")
    except d.DecodeError as e:
        check(name, [w for w in words if w not in str(e)], [])


refused_naming("a pfscale-layout without a required name is refused, "
               "naming it", lambda: d.Layout(dict(
                   (k, v) for k, v in values.items()
                   if k != "_PAGE_BIT_PSE")), ["_PAGE_BIT_PSE"])

# scripts/layout.def: the names, required or not, and bounds both readers
# check pfscale-layout against (crash/pfscale.c includes it)
entries = d.schema()
check("the test kernel's pfscale-layout has layout.def's required names "
      "and no others",
      (sorted(set(values) - set(e.name for e in entries)),
       [e.name for e in entries if e.required and e.name not in values]),
      ([], []))
check("layout.def's optional names",
      [e.name for e in entries if not e.required],
      ["_PAGE_SWP_EXCLUSIVE", "PTE_MARKER_PFSCALE_BUSY"])
one = d.parse_schema("/* a\n * comment */\n\n"
                     "LAYOUT_ITEM(PAGE_SHIFT, REQUIRED, NEED_PTE | NEED_VMA, "
                     "10, 0x1e)  /* trailing */\n", "t.def")
check("a layout.def entry: name, required, groups, bounds",
      [(e.name, e.required, e.groups, e.lo, e.hi) for e in one],
      [("PAGE_SHIFT", True, ("pte", "vma"), 10, 30)])
for what, text in (
        ("a missing bound", "LAYOUT_ITEM(PAGE_SHIFT, REQUIRED, NEED_PTE, 10)"),
        ("an unknown group", "LAYOUT_ITEM(A, REQUIRED, NEED_PT, 0, 1)"),
        ("an unknown kind", "LAYOUT_ITEM(PAGE_SHIFT, MAYBE, NEED_PTE, 0, 1)"),
        ("a line that is not an entry", "#define LAYOUT_ITEM(x) x"),
        ("an unterminated comment", "/* no end\nLAYOUT_ITEM(A, REQUIRED, "
         "NEED_PTE, 0, 1)"),
        ("a name listed twice", "LAYOUT_ITEM(B, OPTIONAL, NEED_PTE, 0, 1)"),
        ("bounds upside down", "LAYOUT_ITEM(A, REQUIRED, NEED_PTE, 2, 1)")):
    refused_naming("layout.def: " + what + " is refused, with its line",
                   lambda: d.parse_schema(
                       "LAYOUT_ITEM(B, REQUIRED, NEED_VMA, 0, 1)\n" + text,
                       "t.def"), ["t.def line 2"])
refused_naming("a pfscale-layout value above layout.def's bound is refused, "
               "naming it", lambda: d.Layout(dict(values, SWP_TYPE_BITS=7)),
               ["SWP_TYPE_BITS 7 is out of bounds"])
refused_naming("a pfscale-layout value below layout.def's bound is refused",
               lambda: d.Layout(dict(values, PAGE_SHIFT=9)),
               ["PAGE_SHIFT 9 is out of bounds"])
refused_naming("a pfscale-layout value out of bounds is printed as the file "
               "has it", lambda: d.Layout(dict(
                   values, MAPLE_HEIGHT_MAX=2**64 - 1)),
               ["MAPLE_HEIGHT_MAX -1 is out of bounds"])
refused("PTRS_PER_PTE that is not a power of two is refused",
        lambda: d.Layout(dict(values, PTRS_PER_PTE=500)))
check("the build-id line of pfscale-layout, None in a file without one",
      (d.layout_build_id("# pfscale-layout: ...\n# build-id 0d68a1\n"
                         "PAGE_SHIFT 12\n"),
       d.layout_build_id("PAGE_SHIFT 12\n")), ("0d68a1", None))
check("a pfscale-layout without the optional names is taken",
      d.Layout(dict((k, v) for k, v in values.items()
                    if k not in ("_PAGE_SWP_EXCLUSIVE",
                                 "PTE_MARKER_PFSCALE_BUSY"))).pte_markers,
      ((0, "uffd-wp"),))

va5 = (1 << 55) | (3 << 39) | (5 << 30) | (7 << 21) | (9 << 12) | 0x234
put(0x1000, va5 >> 48 & 511, 0x2067)          # pgd -> p4d
put(0x2000, 3, 0x3067)                         # p4d -> pud
put(0x3000, 5, 0x4067)                         # pud -> pmd
put(0x4000, 7, 0x5067)                         # pmd -> pte
put(0x4000, 8, 0x40000000 | 0x10e7)           # huge pmd, PAT bit set
put(0x5000, 9, 0x8000000012345067)             # pte
put(0x5000, 10, 0x12346067)                    # contiguous with pte 9
put(0x5000, 11, swp(1, 0x3e))                  # a swap entry
put(0x5000, 12, protnone(0x12347))             # PROT_NONE, PFN follows 10
put(0x5000, 13, swp(30, 2))                    # pfscale-busy marker
put(0x5000, 14, 0x22222067)                    # not PFN-contiguous
put(0x5000, 15, 0x22223267)                    # special (zero page)
p5, p4 = d.Paging(5, lay, "synthetic"), d.Paging(4, lay, "synthetic")

steps, res = d.walk_tables(0x1000, va5, p5, entry)
check("5-level walk: pgd p4d pud pmd pte, phys",
      ([s[0] for s in steps], res),
      (["pgd", "p4d", "pud", "pmd", "pte"], (0x12345234, 12)))
steps, res = d.walk_tables(0x1000, va5 + (1 << 21), p5, entry)
check("huge pmd with the PAT bit: ends at the pmd, 2M page",
      (steps[-1][0], res), ("pmd", (0x40000000 + 0x9234, 21)))
steps, res = d.walk_tables(0x1000, va5 + (3 << 12), p5, entry)
check("PROT_NONE pte is present, its inverted PFN decoded",
      res, (0x12347234, 12))
check("PROT_NONE pte's flags", d.flag_names(steps[-1][3], p5),
      "protnone accessed dirty")
steps, res = d.walk_tables(0x1000, va5 + (2 << 12), p5, entry)
check("swap pte: not present, decoded",
      (res, d.flag_names(steps[-1][3], p5)),
      (None, "not present: swap entry type 1 offset 0x3e"))
va4 = va5 & ((1 << 48) - 1)
steps, res = d.walk_tables(0x2000, va4, p4, entry)
check("4-level walk from the same p4d table",
      ([s[0] for s in steps], res),
      (["pgd", "pud", "pmd", "pte"], (0x12345234, 12)))

check("swap entry with soft-dirty and exclusive",
      d.swap_entry(swp(1, 0x1234, 1 << 3 | 1 << 1), p4),
      {"kind": "swap", "type": 1, "offset": 0x1234,
       "flags": ["soft-dirty", "exclusive"]})
check("pte marker pfscale-busy", d.flag_names(swp(30, 2), p4),
      "not present: pte marker pfscale-busy")
got = d.swap_entry(swp(25, 0x3f5e2 | 1 << 34), p4)   # migration-write; SWP_PFN_BITS 34
check("migration entry: pfn and young bit", (got["pfn"], got["flags"]),
      (0x3f5e2, ["young"]))
check("swapin-error entry", d.flag_names(swp(31, 0), p4),
      "not present: swapin-error entry")
check("none", d.flag_names(0, p4), "not present: none")

lo = va5 & ~((1 << 21) - 1)
absent = {}
runs = d.range_runs(0x1000, lo, lo + (2 << 21), p5, table, absent)
check("runs: contiguous in VA and PFN, PROT_NONE included, special pages counted, huge leaf",
      runs, [(lo + (9 << 12), 0x12345, 2, {12: 2}, 0),
             (lo + (12 << 12), 0x12347, 1, {12: 1}, 0),
             (lo + (14 << 12), 0x22222, 2, {12: 2}, 1),
             (lo + (1 << 21), 0x40000, 512, {21: 1}, 0)])
check("not present counted by kind", absent, {"swap": 1, "pte-marker": 1})
check("pagemap's view merges by the same rule",
      d.runs_from_pagemap([(0x1000, 5), (0x2000, 6), (0x3000, None),
                           (0x4000, 8), (0x5000, 10)], 12),
      [(0x1000, 5, 2), (0x4000, 8, 1), (0x5000, 10, 1)])

vm = {"read": 1, "write": 2, "exec": 4, "shared": 8, "mayshare": 0x80}
check("perms: MAP_SHARED read-only file (VM_MAYSHARE, no VM_SHARED) is s",
      d.perms(0x1 | 0x80, vm), "r--s")
check("perms: private writable is p", d.perms(0x1 | 0x2 | 0x8 * 0, vm),
      "rw-p")
check("pgoff: bytes for a file VMA, 0 for anonymous",
      (d.pgoff_bytes(3, True, lay), d.pgoff_bytes(0x7f00000, False, lay)),
      (0x3000, 0))
try:
    d.Paging(3, lay)
    check("3-level paging refused", "accepted", "refused")
except d.DecodeError:
    check("3-level paging refused", "refused", "refused")

print("1..{}".format(len(checks)))
for name, ok, got, want in checks:
    if ok:
        print("ok - decode: {}".format(name))
    else:
        print("not ok - decode: {} (got {!r}, want {!r})".format(name, got,
                                                               want))
