# Sourced by tests/host/gdb.sh in a live gdb session (guest stopped): make a
# process's maple tree (mm->mm_mt) wrong in guest memory, and put it back,
# so that pf-mm can be checked on a tree that is not as it should be.
#   pf-test-corrupt pivot PID   the root node's pivot[1] := its pivot[0]
#                               (a pivot that does not rise: the walk finds
#                               "pivot@1" in that node)
#   pf-test-corrupt vmstart PID the vm_start of the first VMA of the tree's
#                               leftmost leaf, one page lower (the tree's
#                               range and the VMA's disagree: "!!")
#   pf-test-corrupt restore     write back every word changed, newest first
# Each write is gdb's own `set {unsigned long}ADDR = VALUE`, and each is
# printed as one "CORRUPT ..." line. The guest does not run between the
# writes and the restore: over QEMU's gdbstub every vCPU stays stopped until
# gdb resumes it, and gdb.sh runs no continue/step in between, so no guest
# code ever sees the bad word.
import gdb

from pfscale_gdb import layout, util

# (address, original word) of every word written, oldest first
SAVED = []


def word(addr):
    return int(gdb.parse_and_eval("*(unsigned long *){}".format(addr))) \
        & (2**64 - 1)


def write(addr, value, what):
    old = word(addr)
    SAVED.append((addr, old))
    gdb.execute("set {{unsigned long}}0x{:x} = 0x{:x}".format(addr, value))
    gdb.write("CORRUPT {} @0x{:x}: 0x{:x} -> 0x{:x}\n".format(
        what, addr, old, word(addr)))


def root_node(pid):
    """The encoded root node of pid's mm->mm_mt (xa_is_node()); one error
    line if the root is no node."""
    mm = gdb.parse_and_eval("$lx_task_by_pid({})".format(pid))["mm"]
    root = int(mm["mm_mt"]["ma_root"]) & (2**64 - 1)
    lay = layout.defines()
    if not (root & 3 == 2 and root > lay["MAPLE_RESERVED_RANGE"]):
        raise util.PfError("root 0x{:x} of pid {} is no node".format(
            root, pid))
    return root


def node_of(enode):
    """(node address, type, (pivots offset, npivots, slots offset, nslots),
    leaf) of an encoded node pointer."""
    lay = layout.defines()
    node = enode & ~lay["MAPLE_NODE_MASK"] & (2**64 - 1)
    mtype = (enode >> lay["MAPLE_NODE_TYPE_SHIFT"]) & \
        lay["MAPLE_NODE_TYPE_MASK"]
    geo = layout.maple()
    if mtype not in geo["nodes"] or mtype == geo["dense"]:
        raise util.PfError("node 0x{:x}: type {}".format(node, mtype))
    return node, mtype, geo["nodes"][mtype], mtype == geo["leaf"]


class Corrupt(gdb.Command):
    def __init__(self):
        super(Corrupt, self).__init__("pf-test-corrupt", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-test-corrupt")
    def invoke(self, arg, from_tty):
        args = arg.split()
        if args == ["restore"]:
            while SAVED:
                addr, old = SAVED.pop()
                gdb.execute("set {{unsigned long}}0x{:x} = 0x{:x}".format(
                    addr, old))
                gdb.write("CORRUPT restored @0x{:x}: 0x{:x}\n".format(
                    addr, word(addr)))
            return
        if len(args) != 2 or args[0] not in ("pivot", "vmstart"):
            raise util.PfError("usage: pf-test-corrupt pivot|vmstart PID "
                               "| restore")
        node, mtype, (poff, npiv, soff, nslots), leaf = \
            node_of(root_node(int(args[1])))
        if args[0] == "pivot":
            p0, p1 = word(node + poff), word(node + poff + 8)
            if not p0 or not p1 or npiv < 2:
                raise util.PfError("root node 0x{:x} has fewer than 2 "
                                   "pivots ({:x}, {:x})".format(node, p0, p1))
            write(node + poff + 8, p0,
                  "root node 0x{:x} type {} pivot[1] (pivot[0] 0x{:x})".format(
                      node, mtype, p0))
            return
        # down slot 0 to the leftmost leaf, then its first VMA
        while not leaf:
            node, mtype, (poff, npiv, soff, nslots), leaf = \
                node_of(word(node + soff))
        vma = next((word(node + soff + 8 * i) for i in range(nslots)
                    if word(node + soff + 8 * i)), 0)
        if not vma:
            raise util.PfError("leaf 0x{:x} holds no VMA".format(node))
        start = int(gdb.parse_and_eval(
            "&((struct vm_area_struct *)0x{:x})->vm_start".format(vma)))
        write(start, word(start) - 4096,
              "vm_start of vma 0x{:x} (leaf 0x{:x})".format(vma, node))


Corrupt()
