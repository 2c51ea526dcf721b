#
# pfscale gdb helpers: breakpoints on the lost page-fault races
#
# Every loss site ends in pfscale_count(PFSCALE_..._lost), a per-CPU
# "incq %gs:pfscale_counters+8*N". With -O2 the sites are inlined (mostly
# into __handle_mm_fault) and their source lines are scattered, so the
# breakpoints go on those increment instructions themselves: they are
# found by disassembling the functions that hold the sites named in
# pfscale_counter_desc[].site, and each one's counter is known from its
# operand. At a hit the loser's struct vm_fault is read from the inlined
# frames (vmf is the address of __handle_mm_fault's stack local, which the
# DWARF keeps); the PTE found is read through vmf->pte, i.e. the winner's
# entry. The page-table populate sites have no vmf of their own: the
# address is the one an outer frame faults on (its vmf, or the populate
# function's address argument; %cr2 as a last resort), and what the loser
# found is the entry one level up, read by a page-table walk: the winner's
# new table.
#
# Breakpoints are software ones by default, which TCG and KVM both take;
# --hw uses hardware breakpoints (the debug registers under KVM, of which
# x86 has four, so at most four sites: choose them with --counter).
#

import re
import struct

import gdb

from linux import cpus

from pfscale_gdb import counters, decode, layout, pgtable, util


INC_RE = re.compile(r"^\s*(?:=>\s*)?(0x[0-9a-f]+)\s*(?:<[^>]*>)?:\s*"
                    r"(?:lock\s+)?(?:inc|add)\w*\s.*"
                    r"<pfscale_counters(?:\+(\d+))?>\s*$")

# Sites whose loser compared the PTE with vmf->orig_pte; the others
# expected an empty PTE.
ORIG_PTE_SITES = ("pte_fault_same_lost", "wp_copy_lost", "swapin_lost",
                  "busy_pte_fault")

# The kinds of counter whose increments are watched: races lost, and, only
# when named with --counter, "retry" (a fault found a PTE parked by a
# PTE-lock holder, orig_pte is the marker, and retries) and "detail" (a
# part of a lost counter: anon_cmpxchg_backout, the losers that undid
# their rmap). The kernel's counter table gives each counter's kind
# (include/linux/pfscale_counters.h).
WATCHED_KINDS = ("lost", "retry", "detail")
DEFAULT_KIND = "lost"


def watchable(desc):
    return desc.kind in WATCHED_KINDS

X86_DEBUG_REGISTERS = 4

_sites = None
_watch = None


def _forget_sites(event=None):
    """The loss sites are addresses in one vmlinux: found again after gdb
    loads a new objfile."""
    global _sites
    _sites = None


gdb.events.new_objfile.connect(_forget_sites)


def outer_function(pc):
    """(start, end) of the real (not inlined) function holding pc."""
    block = gdb.block_for_pc(pc)
    if block is None:
        raise util.PfError("no debug info for 0x{:x}".format(pc))
    while block.superblock is not None and \
            not block.superblock.is_static and \
            not block.superblock.is_global:
        block = block.superblock
    return block.start, block.end


def site_code(name):
    """Address ranges of the functions where site function name is (or is
    inlined)."""
    ranges = set()
    try:
        bp = gdb.Breakpoint(name, internal=True)
    except (gdb.error, RuntimeError):
        return ranges
    try:
        for loc in bp.locations:
            if loc.address:
                ranges.add(outer_function(loc.address))
    finally:
        bp.delete()
    return ranges


def loss_sites():
    """[(pc, counter name)] of every increment of a watchable counter."""
    global _sites
    if _sites is not None:
        return _sites
    descs = counters.counter_descs()
    names = [d.name for d in descs]
    try:
        base = gdb.lookup_type("struct pfscale_counters")["count"].bitpos // 8
    except (gdb.error, KeyError):
        base = 0
    ranges = set()
    for d in descs:
        if watchable(d) and d.site:
            ranges |= site_code(d.site)
    if not ranges:
        raise util.PfError("no lost-race site found in the kernel's code")
    sites = []
    for start, end in sorted(ranges):
        text = gdb.execute("disassemble 0x{:x},0x{:x}".format(start, end),
                           to_string=True)
        for line in text.splitlines():
            m = INC_RE.match(line)
            if not m:
                continue
            idx = (int(m.group(2) or 0) - base) // 8
            if 0 <= idx < len(names) and watchable(descs[idx]):
                sites.append((int(m.group(1), 16), names[idx]))
    if not sites:
        raise util.PfError("no pfscale_counters increment of a lost-race "
                           "counter in the site functions")
    _sites = sorted(set(sites))
    return _sites


def select_sites(sites, wanted):
    """The sites of the counters named in wanted (every one of kind
    "lost" if empty)."""
    descs = {d.name: d for d in counters.counter_descs()}
    if not wanted:
        return [(pc, c) for pc, c in sites if descs[c].kind == DEFAULT_KIND]
    known = [n for n, d in descs.items() if watchable(d)]
    for name in wanted:
        if name not in known:
            raise util.PfError("'{}' is not a lost-race counter (one of: {})"
                               .format(name, ", ".join(known)))
    chosen = [(pc, c) for pc, c in sites if c in wanted]
    missing = [n for n in wanted if n not in set(c for _, c in chosen)]
    if missing:
        raise util.PfError("no site of {} in this kernel's code".format(
            ", ".join(missing)))
    return chosen


def table_parent(counter):
    """The level whose entry a populate-site loser found set (the level its
    counter raced on, above the PTEs; p4d is the pgd on 4 levels), or
    None."""
    for d in counters.counter_descs():
        if d.name == counter and d.level not in ("pte", "none"):
            return d.level
    return None


def read_u64(addr):
    mem = gdb.selected_inferior().read_memory(addr, 8)
    return struct.unpack("<Q", bytes(mem))[0]


def frame_var(name, depth=8):
    """The first readable variable name in the innermost frames."""
    frame = gdb.newest_frame()
    for _ in range(depth):
        if frame is None:
            break
        try:
            val = frame.read_var(name)
            if not val.is_optimized_out:
                val.fetch_lazy()
                return val
        except (ValueError, gdb.error, gdb.MemoryError):
            pass
        frame = frame.older()
    return None


def pte_value(val):
    """The int in a pte_t (or None if unreadable)."""
    try:
        return int(val["pte"])
    except (gdb.error, gdb.MemoryError, TypeError):
        return None


def describe(counter):
    """What the loser at the current stop saw: a dict."""
    cpu = cpus.get_current_cpu()
    task = gdb.parse_and_eval("$lx_current()")
    r = {"cpu": cpu, "pid": int(task["pid"]), "tgid": int(task["tgid"]),
         "comm": task["comm"].string(), "counter": counter,
         "pc": "0x{:x}".format(int(gdb.newest_frame().pc()))}
    parent = table_parent(counter)
    vmf = frame_var("vmf")
    addr = found = expected = ours = None
    if vmf is not None:
        try:
            addr = int(vmf["address"])
            pte_p = int(vmf["pte"]) if parent is None else 0
            if pte_p:
                found = read_u64(pte_p)
            if counter in ORIG_PTE_SITES:
                expected = pte_value(vmf["orig_pte"])
            r["source"] = "vmf"
        except (gdb.error, gdb.MemoryError):
            addr = None
    for name in ("address", "addr"):
        if addr is None:
            val = frame_var(name)
            if val is not None:
                addr = int(val)
                r["source"] = name
    if addr is None:
        addr = int(gdb.parse_and_eval("$cr2")) & (2**64 - 1)
        r["source"] = "cr2"
    if expected is None and counter not in ORIG_PTE_SITES:
        expected = 0
    entry = frame_var("entry") if parent is None else None
    if entry is not None:
        ours = pte_value(entry)
    paging = pgtable.detect() if found is None and int(task["mm"]) \
        else None
    if paging is not None and addr < paging.user_top:
        steps, _ = pgtable.walk(task["mm"], addr, paging)
        if parent is not None:
            names = [st[0] for st in steps]
            level = "pgd" if parent == "p4d" and paging.levels == 4 \
                else parent
            if level in names:
                steps = steps[:names.index(level) + 1]
        found = steps[-1][3]
        r["found_level"] = steps[-1][0]
    r["address"] = "0x{:x}".format(addr)
    for key, val in (("expected", expected), ("found", found),
                     ("ours", ours)):
        r[key] = None if val is None else "0x{:016x}".format(val)
    r["found_present"] = found is not None and decode.is_present(
        found, layout.defines())
    r["found_flags"] = pgtable.flag_names(found) if found is not None \
        else ""
    r["expected_flags"] = pgtable.flag_names(expected) \
        if expected is not None else ""
    return r


def format_loss(n, r):
    expected = r["expected"] or "?"
    if r["expected"] and int(r["expected"], 16):
        expected += " [{}]".format(r["expected_flags"])
    line = ("loss {} cpu {} pid {} ({}) {} addr {} expected {} found {} [{}]"
            .format(n, r["cpu"], r["pid"], r["comm"], r["counter"],
                    r["address"], expected, r["found"] or "?",
                    r["found_flags"]))
    if r["ours"]:
        line += " ours {}".format(r["ours"])
    if r.get("found_level", "pte") != "pte":
        line += " (walk ends at {})".format(r["found_level"])
    return line


class LossBreakpoint(gdb.Breakpoint):
    """A breakpoint on one loss site's counter increment."""

    def __init__(self, watch, pc, counter, hardware):
        kind = gdb.BP_HARDWARE_BREAKPOINT if hardware else gdb.BP_BREAKPOINT
        super(LossBreakpoint, self).__init__("*0x{:x}".format(pc), type=kind,
                                             internal=True)
        self.watch = watch
        self.counter = counter

    def stop(self):
        return self.watch.hit(self.counter)


class Watch(object):
    def __init__(self, sites, count, stop_each, as_json, hardware):
        self.count = count
        self.stop_each = stop_each
        self.as_json = as_json
        self.seen = 0
        self.bps = []
        try:
            for pc, c in sites:
                self.bps.append(LossBreakpoint(self, pc, c, hardware))
        except (gdb.error, RuntimeError):
            self.remove()
            raise

    def done(self):
        return self.count is not None and self.seen >= self.count

    def hit(self, counter):
        if self.done():
            return False
        self.seen += 1
        try:
            r = describe(counter)
        except (util.PfError, gdb.error, gdb.MemoryError, ValueError) as e:
            r = None
            gdb.write("pf-race-watch: loss {} ({}): {}\n".format(
                self.seen, counter, str(e).strip().splitlines()[0]))
        if r is not None:
            if self.as_json:
                r["loss"] = self.seen
                util.write_json(r)
            else:
                gdb.write(format_loss(self.seen, r) + "\n")
        gdb.flush()
        return self.stop_each or self.done()

    def remove(self):
        for bp in self.bps:
            if bp.is_valid():
                bp.delete()
        self.bps = []


def clear():
    global _watch
    if _watch is not None:
        _watch.remove()
        _watch = None


def on_stop(event):
    if _watch is not None and _watch.done():
        clear()


class PfRaceWatch(gdb.Command):
    """Report lost page-fault races as they happen.

pf-race-watch [--counter NAME]... [--hw] [--count N] [--stop] [--json]
pf-race-watch [--counter NAME]... --list | --clear

Put a breakpoint on every lost-race site (each pfscale_count() of a
counter of kind "lost" in the kernel's code), let the guest run, and
print one line per loss: CPU, task (pid and comm), counter, faulting address, the
PTE the loser expected (none, or vmf->orig_pte), the PTE it found (the
winner's) with its flags, and the PTE it wanted to install when that is
readable. At a page-table populate site (a level above pte) what was found
is the upper entry pointing to the winner's table (found_level says
which). After N losses (default: until interrupted) the breakpoints go
and the guest stays stopped at the last loss. --stop returns to the prompt
at every loss instead (the frame is the loss site: bt, info locals work);
"continue" runs to the next, and the breakpoints go after N losses or with
--clear.

--counter NAME (repeatable, or NAME,NAME) watches only those counters'
sites; it may also name a counter of kind "retry" (busy_pte_fault: a
fault that found a PTE parked by a PTE-lock holder; expected is then
that marker) or "detail" (anon_cmpxchg_backout: a loser that lost the
cmpxchg itself and undid its rmap). --hw uses hardware
breakpoints: under KVM these are the x86 debug registers, four at most,
so choose the counters; software breakpoints (the default) work under
both TCG and KVM. --list prints the sites;
--json prints one object per loss."""

    def __init__(self):
        super(PfRaceWatch, self).__init__("pf-race-watch", gdb.COMMAND_DATA)

    @util.one_line_errors("pf-race-watch")
    def invoke(self, arg, from_tty):
        global _watch
        count = None
        wanted = []
        rest = []
        it = iter(gdb.string_to_argv(arg))
        for w in it:
            if w == "--count":
                count = util.parse_int(next(it, ""), "count")
            elif w.startswith("--count="):
                count = util.parse_int(w[8:], "count")
            elif w == "--counter" or w.startswith("--counter="):
                names = next(it, "") if w == "--counter" else w[10:]
                if not names:
                    raise util.PfError("--counter needs a counter name")
                wanted += [n for n in names.split(",") if n]
            else:
                rest.append(w)
        if count is not None and count < 1:
            raise util.PfError("--count must be at least 1")
        opts = set(rest)
        if opts - {"--stop", "--json", "--list", "--clear", "--hw"}:
            raise util.PfError("usage: pf-race-watch [--counter NAME]... "
                               "[--hw] [--count N] [--stop] [--json] | "
                               "--list | --clear")
        if "--clear" in opts:
            clear()
            return
        sites = select_sites(loss_sites(), wanted)
        if "--list" in opts:
            for pc, c in sites:
                gdb.write("0x{:x} {} {}\n".format(pc, c, gdb.execute(
                    "info symbol 0x{:x}".format(pc),
                    to_string=True).strip()))
            return
        hardware = "--hw" in opts
        if hardware and len(sites) > X86_DEBUG_REGISTERS:
            raise util.PfError(
                "--hw: {} sites, but x86 has {} debug registers; choose "
                "fewer with --counter (see --list)".format(
                    len(sites), X86_DEBUG_REGISTERS))
        clear()
        _watch = Watch(sites, count, "--stop" in opts, "--json" in opts,
                       hardware)
        gdb.write("pf-race-watch: {} {}breakpoints on {} lost-race counters{}"
                  "\n".format(len(sites), "hardware " if hardware else "",
                              len(set(c for _, c in sites)),
                              ", {} losses".format(count) if count else
                              ", until interrupted"))
        gdb.flush()
        if _watch.stop_each:
            gdb.execute("continue")
            return
        watch = _watch
        try:
            while not watch.done():
                seen = watch.seen
                gdb.execute("continue")
                if watch.seen == seen:      # stopped for another reason
                    break
        finally:
            if _watch is watch:
                clear()
        gdb.write("pf-race-watch: {} losses seen, breakpoints removed\n"
                  .format(watch.seen))


gdb.events.stop.connect(on_stop)
PfRaceWatch()
