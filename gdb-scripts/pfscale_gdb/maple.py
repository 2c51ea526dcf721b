#
# pfscale gdb helpers: walk a 6.1 maple tree (lib/maple_tree.c)
#
# A maple tree's ma_root is either one entry (covering index 0) or an
# encoded node pointer ("enode"): the node is 256-byte aligned, bits 3..6
# hold its enum maple_type and bit 1 (MAPLE_ROOT_NODE) marks the root.
# How many pivots and slots each node type has is the kernel's mt_pivots[]
# and mt_slots[] (15 and 16 for maple_range_64 nodes and leaf_64 leaves,
# 9 and 10 for maple_arange_64 nodes of allocation trees such as
# mm->mm_mt), the type values are enum maple_type's (layout.maple()).
# Slot i covers [pivot[i-1] + 1, pivot[i]], the last slot up to the
# node's max; a zero pivot after slot 0 ends the node.
# Each node is read with one memory read and decoded with offsets taken
# from the kernel's own struct types.
#

import struct

import gdb

from pfscale_gdb import decode, layout


# The encoding of a node pointer (MAPLE_NODE_MASK, MAPLE_NODE_TYPE_SHIFT,
# ...) is #defines in lib/maple_tree.c and include/linux/maple_tree.h, so
# not in the debug info: layout.defines() has their values. The walk is
# decode.maple_walk(), which crash/decode.c's pfd_maple_walk() mirrors
# (tests/vectors/decode.json holds both to the same answers).
ULONG_MAX = 2**64 - 1


def read_node(addr, size):
    try:
        mem = gdb.selected_inferior().read_memory(addr, size)
    except gdb.MemoryError:
        return None
    return struct.unpack("<{}Q".format(size // 8), bytes(mem))


# What decode.maple_walk() finds wrong, each in one line, in the words of
# crash's pfvma (crash/maple.c). The walk goes on past it, as crash's does:
# gdb reads a snapshot too (over QEMU's gdbstub every vCPU is stopped while
# gdb reads; a -p dump is one), and a tree caught mid-update under the
# mmap_lock, or a corrupt one, is a state worth showing.
PROBLEM = {"deep": "maple tree deeper than {height} at node 0x{node:x}",
           "nodes": "more than {nodes} maple nodes: corrupt or changing",
           "unreadable": "cannot read maple node 0x{node:x}",
           "type": "maple node 0x{node:x}: not a maple_type it knows",
           "pivot": "maple node 0x{node:x}: {what} below the one before or "
                    "outside [0x{lo:x}, 0x{hi:x}]"}


def problem_line(bad, lay):
    """One line for one (what, node, lo, hi) of decode.maple_walk()."""
    what, node, lo, hi = bad
    return PROBLEM[what.split("@")[0]].format(
        height=lay["MAPLE_HEIGHT_MAX"], nodes=decode.MAPLE_MAX_NODES,
        node=node, what=what, lo=lo, hi=hi)


def walk(tree):
    """Walk the maple tree (a struct maple_tree gdb.Value) as far as it can
    be read: {"entries": [(first, last, entry)] in index order, entry the
    slot's value as an int; "nodes": nodes read; "height": mt_height();
    "problems": one line for each thing found wrong (the walk went on
    past it)}. Internal entries are entries too: the caller decides."""
    root = int(tree["ma_root"]) & ULONG_MAX
    geo = layout.maple()
    lay = layout.defines()
    out, nodes, bad = decode.maple_walk(
        root, geo, lay, lambda node: read_node(node, geo["node_size"]))
    flags = int(tree["ma_flags"])
    return {"entries": out, "nodes": nodes,
            "height": (flags & lay["MT_FLAGS_HEIGHT_MASK"]) >>
            lay["MT_FLAGS_HEIGHT_OFFSET"],
            "problems": [problem_line(b, lay) for b in bad]}
