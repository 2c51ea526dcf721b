#
# pfscale gdb helpers: what the readers need to know of the kernel's layout,
# read from the kernel itself
#
# Offsets and sizes come from the DWARF types, enum values from their
# enumerators, geometry from the kernel's own tables (mt_slots[],
# mt_pivots[], vmaflag_names[]), and the #defines that the debug info
# lacks from pfscale-layout, which scripts/layout.sh writes next to
# vmlinux at kernel build time. Each fact is looked up once and cached
# until gdb loads a new objfile (another vmlinux), as the kernel's
# scripts/gdb CachedType does.
#

import os

import gdb

from pfscale_gdb import decode, util


_cache = {}


def _reset(event=None):
    _cache.clear()


gdb.events.new_objfile.connect(_reset)


def cached(fn):
    """Cache fn's result (per argument tuple) until a new objfile."""
    def get(*args):
        key = (fn.__name__,) + args
        if key not in _cache:
            _cache[key] = fn(*args)
        return _cache[key]
    get.__name__ = fn.__name__
    get.__doc__ = fn.__doc__
    return get


@cached
def struct(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        raise util.PfError("kernel has no type '{}'".format(name))


@cached
def member(type_name, name):
    """(byte offset, size) of a member, also inside anonymous unions and
    structs (maple_range_64's slot[], pivot[])."""
    def find(t, base):
        for f in t.fields():
            if f.name == name:
                return base + f.bitpos // 8, f.type.sizeof
        for f in t.fields():
            if f.name is None:
                r = find(f.type.strip_typedefs(), base + f.bitpos // 8)
                if r:
                    return r
        return None
    r = find(struct(type_name).strip_typedefs(), 0)
    if r is None:
        raise util.PfError("no member {} in {}".format(name, type_name))
    return r


@cached
def enumerators(one):
    """{name: value} of the enum that holds enumerator one (named enums
    and anonymous ones alike)."""
    try:
        t = gdb.parse_and_eval(one).type.strip_typedefs()
    except gdb.error:
        raise util.PfError("kernel has no enumerator {}".format(one))
    return dict((f.name, f.enumval) for f in t.fields())


@cached
def byte_table(symbol):
    """A kernel array of small integers (mt_slots[]) as a tuple."""
    try:
        v = gdb.parse_and_eval(symbol)
        lo, hi = v.type.range()
    except gdb.error:
        raise util.PfError("kernel has no table {}[]".format(symbol))
    return tuple(int(v[i]) for i in range(lo, hi + 1))


@cached
def vm_flags():
    """({name: value} of decode.VM_FLAG_NAMES, where they were read)."""
    if not util.have_symbol("vmaflag_names"):
        return decode.vm_flags_from_table(None)
    table = gdb.parse_and_eval("vmaflag_names")
    pairs = []
    for i in range(64):
        name = table[i]["name"]
        if not int(name):
            break
        pairs.append((name.string(), int(table[i]["mask"])))
    try:
        return decode.vm_flags_from_table(pairs)
    except decode.DecodeError as e:
        raise util.PfError(str(e))


@cached
def mm_counters():
    """[(index, short name)] of the mm's rss counters (MM_FILEPAGES ->
    filepages), from their enum, in index order."""
    return decode.mm_counter_names(enumerators("NR_MM_COUNTERS"))


@cached
def maple():
    """The maple tree's geometry: {type value: (pivots offset, npivots,
    slots offset, nslots)} of the node types that hold pivots, the dense
    and leaf_64 type values, and the node size; the counts from the
    kernel's mt_slots[] and mt_pivots[], indexed by enum maple_type."""
    types = enumerators("maple_leaf_64")
    slots, pivots = byte_table("mt_slots"), byte_table("mt_pivots")
    geometry = {}
    for tname, sname in (("maple_leaf_64", "struct maple_range_64"),
                         ("maple_range_64", "struct maple_range_64"),
                         ("maple_arange_64", "struct maple_arange_64")):
        t = types[tname]
        poff, _ = member(sname, "pivot")
        soff, _ = member(sname, "slot")
        geometry[t] = (poff, pivots[t], soff, slots[t])
    # a dense node: slots only, each one index
    dense = types["maple_dense"]
    geometry[dense] = (0, 0, member("struct maple_node", "slot")[0],
                       slots[dense])
    return {"nodes": geometry, "dense": dense,
            "leaf": types["maple_leaf_64"],
            "range": types["maple_range_64"],
            "node_size": struct("struct maple_node").sizeof}


def layout_path():
    """Where this kernel's pfscale-layout is: $PFSCALE_LAYOUT, else next to
    the vmlinux gdb loaded."""
    if os.environ.get("PFSCALE_LAYOUT"):
        return os.environ["PFSCALE_LAYOUT"]
    vmlinux = gdb.current_progspace().filename
    if not vmlinux:
        raise util.PfError("no vmlinux loaded (gdb vmlinux, or file vmlinux)")
    return os.path.join(os.path.dirname(os.path.abspath(vmlinux)),
                        "pfscale-layout")


def vmlinux_build_id():
    """The GNU build-id of the vmlinux gdb loaded, None if it has none."""
    vmlinux = gdb.current_progspace().filename
    for objfile in gdb.objfiles():
        if objfile.filename == vmlinux:
            return objfile.build_id
    return None


@cached
def defines():
    """The kernel's decode.Layout: the #define values of its
    pfscale-layout."""
    path = layout_path()
    try:
        with open(path) as f:
            text = f.read()
    except (IOError, OSError) as e:
        raise util.PfError(
            "cannot read {} ({}): make it with scripts/layout.sh "
            "KERNEL_BUILD_DIR > {} (or set PFSCALE_LAYOUT)".format(
                path, e.strerror or e, path))
    lay = decode.Layout(decode.parse_layout(text, path), path)
    # A file of another kernel: written for another build-id; in a file
    # without one, swap_info[] does not have MAX_SWAPFILES entries.
    want, have = decode.layout_build_id(text), vmlinux_build_id()
    if want and have:
        if want != have:
            raise util.PfError("{} is not this vmlinux's: build-id {}, "
                               "vmlinux has {}".format(path, want, have))
    elif util.have_symbol("swap_info"):
        n = int(gdb.parse_and_eval("sizeof(swap_info) / sizeof(swap_info[0])"))
        if n != lay["MAX_SWAPFILES"]:
            raise util.PfError("{} is not this vmlinux's: MAX_SWAPFILES {}, "
                               "swap_info[] has {}".format(
                                   path, lay["MAX_SWAPFILES"], n))
    return lay
