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

from pfscale_gdb import decode, layout, util


# The encoding of a node pointer (MAPLE_NODE_MASK, MAPLE_NODE_TYPE_SHIFT,
# ...) is #defines in lib/maple_tree.c and include/linux/maple_tree.h, so
# not in the debug info: layout.defines() has their values. The walk is
# decode.maple_walk(), which crash/decode.c's pfd_maple_walk() mirrors
# (tests/vectors/decode.json holds both to the same answers).
ULONG_MAX = 2**64 - 1
xa_is_internal = decode.xa_is_internal


def read_node(addr, size):
    try:
        mem = gdb.selected_inferior().read_memory(addr, size)
    except gdb.MemoryError:
        return None
    return struct.unpack("<{}Q".format(size // 8), bytes(mem))


# What decode.maple_walk() finds wrong, as one error line: gdb reads a
# live tree, which may be changing, so it stops rather than guesses.
BAD = {"deep": "maple tree deeper than {height}: corrupt or changing",
       "nodes": "more than {nodes} maple nodes: corrupt or changing",
       "unreadable": "cannot read maple node 0x{node:x}",
       "type": "maple node 0x{node:x}: unknown type",
       "pivot": "maple node 0x{node:x}: {what} below the one before or "
                "outside [0x{lo:x}, 0x{hi:x}]: tree changing or corrupt"}


def entries(tree):
    """[(first, last, entry)] of the maple tree (a struct maple_tree
    gdb.Value), in index order; entry is the slot's value as an int
    (internal entries left out)."""
    root = int(tree["ma_root"]) & ULONG_MAX
    geo = layout.maple()
    lay = layout.defines()
    out, _, bad = decode.maple_walk(
        root, geo, lay, lambda node: read_node(node, geo["node_size"]))
    if bad:
        what, node, lo, hi = bad[0]
        raise util.PfError(BAD[what.split("@")[0]].format(
            height=lay["MAPLE_HEIGHT_MAX"], nodes=decode.MAPLE_MAX_NODES,
            node=node, what=what, lo=lo, hi=hi))
    return [(f, l, e) for f, l, e in out if not xa_is_internal(e)]
