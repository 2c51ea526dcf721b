#
# pfscale gdb helpers: walk a 6.1 maple tree (lib/maple_tree.c)
#
# A maple tree's ma_root is either one entry (covering index 0) or an
# encoded node pointer ("enode"): the node is 256-byte aligned, bits 3..6
# hold its enum maple_type and bit 1 (MAPLE_ROOT_NODE) marks the root.
# maple_range_64 nodes (and leaf_64 leaves) have 15 pivots and 16 slots,
# maple_arange_64 nodes (allocation trees such as mm->mm_mt) 9 pivots,
# 10 slots and 10 gaps. Slot i covers [pivot[i-1] + 1, pivot[i]], the last
# slot up to the node's max; a zero pivot after slot 0 ends the node.
# Each node is read with one memory read and decoded with offsets taken
# from the kernel's own struct types.
#

import struct

import gdb

from pfscale_gdb import util


MAPLE_DENSE, MAPLE_LEAF_64, MAPLE_RANGE_64, MAPLE_ARANGE_64 = range(4)
MAPLE_NODE_MASK = 255
MAPLE_NODE_TYPE_SHIFT = 3
MAPLE_NODE_TYPE_MASK = 0x0F
MAPLE_ROOT_NODE = 0x02
MAPLE_HEIGHT_MAX = 31
ULONG_MAX = 2**64 - 1
NODE_SIZE = 256
MAX_NODES = 1 << 16     # a sanity bound: a corrupt tree must not loop


def xa_is_internal(entry):
    return entry & 3 == 2


def xa_is_node(entry):
    return xa_is_internal(entry) and entry > 4096


def mte_node_type(enode):
    return (enode >> MAPLE_NODE_TYPE_SHIFT) & MAPLE_NODE_TYPE_MASK


def mte_to_node(enode):
    return enode & ~MAPLE_NODE_MASK


_layout = {}


def layout():
    """{type: (pivots offset, npivots, slots offset, nslots)} from the
    kernel's struct maple_range_64 and struct maple_arange_64."""
    if _layout:
        return _layout
    try:
        r64 = gdb.lookup_type("struct maple_range_64")
        a64 = gdb.lookup_type("struct maple_arange_64")
    except gdb.error:
        raise util.PfError("kernel has no maple tree types (not 6.1+?)")

    def field(t, name):
        """(byte offset, size) of t.name, also inside an anonymous union
        (slot[] of maple_range_64)."""
        for f in t.fields():
            if f.name == name:
                return f.bitpos // 8, f.type.sizeof
        for f in t.fields():
            if f.name is None:
                for g in f.type.fields():
                    if g.name == name:
                        return (f.bitpos + g.bitpos) // 8, g.type.sizeof
        raise util.PfError("no field {} in {}".format(name, t))

    for types, t in (((MAPLE_LEAF_64, MAPLE_RANGE_64), r64),
                     ((MAPLE_ARANGE_64,), a64)):
        (poff, psize), (soff, ssize) = field(t, "pivot"), field(t, "slot")
        for ty in types:
            _layout[ty] = (poff, psize // 8, soff, ssize // 8)
    return _layout


def read_node(addr):
    mem = gdb.selected_inferior().read_memory(addr, NODE_SIZE)
    return struct.unpack("<{}Q".format(NODE_SIZE // 8), bytes(mem))


def walk_node(enode, lo, hi, depth, out, budget):
    """Append (first, last, entry) of every non-empty leaf slot."""
    if depth > MAPLE_HEIGHT_MAX:
        raise util.PfError("maple tree deeper than {}: corrupt or changing"
                           .format(MAPLE_HEIGHT_MAX))
    budget[0] -= 1
    if budget[0] < 0:
        raise util.PfError("more than {} maple nodes: corrupt or changing"
                           .format(MAX_NODES))
    mtype = mte_node_type(enode)
    words = read_node(mte_to_node(enode))
    if mtype == MAPLE_DENSE:
        for i, entry in enumerate(words[1:]):
            if lo + i > hi:
                break
            if entry and not xa_is_internal(entry):
                out.append((lo + i, lo + i, entry))
        return
    if mtype not in layout():
        raise util.PfError("maple node 0x{:x}: unknown type {}".format(
            enode, mtype))
    poff, npiv, soff, nslots = layout()[mtype]
    pivots = words[poff // 8:poff // 8 + npiv]
    slots = words[soff // 8:soff // 8 + nslots]
    leaf = mtype < MAPLE_RANGE_64
    first = lo
    for i in range(nslots):
        last = hi
        if i < npiv:
            last = pivots[i]
        elif not slots[i]:
            break
        if last == 0 and i > 0:
            break
        if last > hi:
            raise util.PfError("maple node 0x{:x}: pivot {} (0x{:x}) beyond "
                               "its max 0x{:x}".format(enode, i, last, hi))
        entry = slots[i]
        if leaf:
            if entry and not xa_is_internal(entry):
                out.append((first, last, entry))
        elif entry:
            walk_node(entry, first, last, depth + 1, out, budget)
        if last == hi:
            break
        first = last + 1


def entries(tree):
    """[(first, last, entry)] of the maple tree (a struct maple_tree
    gdb.Value), in index order; entry is the slot's value as an int."""
    root = int(tree["ma_root"]) & ULONG_MAX
    if not root:
        return []
    if not xa_is_node(root):
        return [(0, 0, root)]
    out = []
    walk_node(root & ~MAPLE_ROOT_NODE, 0, ULONG_MAX, 0, out, [MAX_NODES])
    return out
