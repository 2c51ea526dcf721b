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
# not in the debug info: layout.defines() has their values.
ULONG_MAX = 2**64 - 1
MAX_NODES = 1 << 16     # a sanity bound: a corrupt tree must not loop


xa_is_internal = decode.xa_is_internal


def xa_is_node(entry):
    return xa_is_internal(entry) and \
        entry > layout.defines()["MAPLE_RESERVED_RANGE"]


def mte_node_type(enode):
    k = layout.defines()
    return (enode >> k["MAPLE_NODE_TYPE_SHIFT"]) & k["MAPLE_NODE_TYPE_MASK"]


def mte_to_node(enode):
    return enode & ~layout.defines()["MAPLE_NODE_MASK"]


def read_node(addr, size):
    mem = gdb.selected_inferior().read_memory(addr, size)
    return struct.unpack("<{}Q".format(size // 8), bytes(mem))


def walk_node(enode, lo, hi, depth, out, budget):
    """Append (first, last, entry) of every non-empty leaf slot."""
    height_max = layout.defines()["MAPLE_HEIGHT_MAX"]
    if depth > height_max:
        raise util.PfError("maple tree deeper than {}: corrupt or changing"
                           .format(height_max))
    budget[0] -= 1
    if budget[0] < 0:
        raise util.PfError("more than {} maple nodes: corrupt or changing"
                           .format(MAX_NODES))
    geo = layout.maple()
    mtype = mte_node_type(enode)
    words = read_node(mte_to_node(enode), geo["node_size"])
    error, leaf, slots = decode.maple_node(geo, words, mtype, lo, hi)
    if error == "type":
        raise util.PfError("maple node 0x{:x}: unknown type {}".format(
            enode, mtype))
    if error != "ok":
        raise util.PfError("maple node 0x{:x}: {} outside [0x{:x}, 0x{:x}]: "
                           "tree changing or corrupt".format(
                               enode, error.replace("@", " of slot "), lo, hi))
    for first, last, entry in slots:
        if not leaf:
            walk_node(entry, first, last, depth + 1, out, budget)
        elif not xa_is_internal(entry):
            out.append((first, last, entry))


def entries(tree):
    """[(first, last, entry)] of the maple tree (a struct maple_tree
    gdb.Value), in index order; entry is the slot's value as an int."""
    root = int(tree["ma_root"]) & ULONG_MAX
    if not root:
        return []
    if not xa_is_node(root):
        return [(0, 0, root)]
    out = []
    walk_node(root & ~layout.defines()["MAPLE_ROOT_NODE"], 0, ULONG_MAX, 0,
              out, [MAX_NODES])
    return out
