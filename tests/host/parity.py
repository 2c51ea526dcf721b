#!/usr/bin/env python3
# The comparisons of tests/host/parity.sh: /proc's view of h_parity (its
# "PARITY ..." console lines) against each reader's JSON, and the readers
# against each other, field by field. One TAP result per check; a
# disagreement names the field, where (VMA, region, thread, counter) and
# both values.
#
#   parity.py CONSOLE_LOG NAME=OUTPUT...   the results (no plan line)
#   parity.py --count                      how many results that is
#   parity.py --fail-all REASON            that many "not ok" results
#
# The guest tools (pfrss, pfstat) ran in the guest on the same state and
# printed their --json as "PARITY tool NAME JSON" lines: they are checked
# against debugfs's own files, which h_parity printed.
#
# A reader's OUTPUT is gdb's (sections "@@mm", "@@rss", "@@range",
# "@@counters", "@@region NAME", each followed by one JSON line) or
# crash's (the same JSON lines in that order, without markers: crash's
# echo is not ordered with the extension's output). A gdb reader's
# "@@badmm" section, and crash's output given as crash-dump:badmm=OUTPUT,
# are pf-mm / pfvma on the tree made wrong (parity.sh): its problem lines
# ("pf-mm: ..." / "pfvma: ...") and its JSON line.
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "gdb-scripts"))
from pfscale_gdb import decode  # noqa: E402

READERS = ("gdb-live", "gdb-dump", "crash-dump")
PAGE_KB = 4            # /proc's page: the guest's (x86-64) 4 KiB
PAGE_SHIFT = 12

# (name, function(proc, reader) -> None or "disagreement"), per reader
PER_READER = []
# (name, function(reader a, reader b) -> None or "disagreement"), per pair
CROSS = []
PAIRS = (("gdb-live", "gdb-dump"), ("gdb-live", "crash-dump"))


def per_reader(name):
    def add(fn):
        PER_READER.append((name, fn))
        return fn
    return add


def cross(name):
    def add(fn):
        CROSS.append((name, fn))
        return fn
    return add


# (name, function(proc, readers) -> None or "disagreement"): the guest tools
TOOLS = []


def tool(name):
    def add(fn):
        TOOLS.append((name, fn))
        return fn
    return add


def count():
    return (len(PER_READER) * len(READERS) + len(CROSS) * len(PAIRS) +
            len(TOOLS))


# --- /proc's view, from the console ------------------------------------

def read_proc(log):
    p = {"maps": [], "smaps": {}, "regions": [], "pagemap": {},
         "status": {}, "counters": {}, "rss": {"threads": {}},
         "tools": {"pfrss": [], "pfstat": []}}
    with open(log, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            if not line.startswith("PARITY "):
                continue
            tag, _, rest = line[7:].partition(" ")
            if tag == "maps":
                p["maps"].append(rest)
            elif tag == "smaps":
                rng, rss, swap, huge = rest.split()
                p["smaps"][int(rng.split("-")[0], 16)] = (
                    int(rss), int(swap), int(huge))
            elif tag == "region":
                name, start, end = rest.split()
                p["regions"].append((name, int(start, 16), int(end, 16)))
            elif tag == "pagemap":
                w = rest.split()
                va = int(w[0], 16)
                p["pagemap"][va] = (("present", int(w[2])) if w[1] == "present"
                                    else ("swap", int(w[2]), int(w[3], 16)))
            elif tag == "status":
                k, v = rest.split(":", 1)
                p["status"][k] = int(v.split()[0])
            elif tag == "tool":
                name, _, text = rest.partition(" ")
                p["tools"].setdefault(name, []).append(text)
            elif tag == "counter":
                k, v = rest.split()
                p["counters"][k] = int(v)
            elif tag == "rss":
                w = rest.split()
                if w[0] == "thread":
                    # thread TID events E file F anon A swap S shmem H
                    p["rss"]["threads"][int(w[1])] = {
                        "events": int(w[3]), "filepages": int(w[5]),
                        "anonpages": int(w[7]), "swapents": int(w[9]),
                        "shmempages": int(w[11])}
                elif w[0] in ("rss_mm", "rss_split", "rss_scan"):
                    p["rss"][w[0]] = int(w[1])
    return p


def maps_vmas(maps):
    """[(start, end, perms, pgoff, name)] of /proc/PID/maps lines, the name
    as docs/debuggers.md's rule has it (no " (deleted)")."""
    out = []
    for line in maps:
        w = line.split(None, 5)
        s, e = (int(x, 16) for x in w[0].split("-"))
        name = w[5].strip() if len(w) > 5 else ""
        if name.endswith(" (deleted)"):
            name = name[:-len(" (deleted)")]
        out.append((s, e, w[1], int(w[2], 16), name))
    return out


# --- a reader's output ----------------------------------------------------

def problem_lines(lines):
    """The problem lines of a pf-mm / pfvma output, without the command's
    name and gdb's "0x": "maple node ffff...: pivot@1 below ...". Not
    pf-mm's warnings."""
    return [re.sub(r"0x", "", x.split(": ", 1)[1]) for x in lines
            if re.match(r"^(pf-mm|pfvma): ", x) and
            not x.startswith("pf-mm: warning: ")]


def read_reader(path, regions, order=None):
    r = {}
    try:
        with open(path, errors="replace") as f:
            lines = [x.rstrip("\n") for x in f]
    except OSError as e:
        return {"error": str(e)}
    if order is None and any(x == "@@mm" for x in lines):
        sec, text = None, {}
        for x in lines:
            if x.startswith("@@"):
                sec = x[2:]
                text.setdefault(sec, [])
            elif sec and x.startswith("{") and sec not in r:
                r[sec] = json.loads(x)
            elif sec:
                text[sec].append(x)
        if "badmm" in text:
            r["badmm lines"] = problem_lines(text["badmm"])
        return r
    order = order or (["mm", "rss", "range", "counters"] +
                      ["region " + name for name, _, _ in regions])
    docs = [json.loads(x) for x in lines if x.startswith("{")]
    for sec, doc in zip(order, docs):
        r[sec] = doc
    if "badmm" in order:
        r["badmm lines"] = problem_lines(lines)
    return r


def need(r, *secs):
    for s in secs:
        if s not in r:
            return "no '{}' output{}".format(s, ": " + r["error"]
                                             if "error" in r else "")
    return None


def diff_values(what, proc_value, reader_value):
    if proc_value != reader_value:
        return "{}: /proc {!r}, reader {!r}".format(what, proc_value,
                                                     reader_value)
    return None


# --- the checks against /proc --------------------------------------------

@per_reader("VMAs (start, end, perms, pgoff in bytes, name) equal "
            "/proc/PID/maps line by line, [vsyscall] included")
def check_maps(p, r):
    bad = need(r, "mm")
    if bad:
        return bad
    want = maps_vmas(p["maps"])
    got = [(int(v["start"], 16), int(v["end"], 16), v["perms"], v["pgoff"],
            v["name"]) for v in r["mm"]["vmas"]]
    if len(want) < 1000:
        return "only {} maps lines: the 1000+ VMA state is missing".format(
            len(want))
    fields = ("start", "end", "perms", "pgoff", "name")
    for i, (w, g) in enumerate(zip(want, got)):
        for k, a, b in zip(fields, w, g):
            if a != b:
                return "VMA {} (0x{:x}): field {}: /proc {!r}, reader " \
                    "{!r}".format(i, w[0], k, a, b)
    if len(want) != len(got):
        return "field vmas: /proc {} VMAs, reader {}".format(len(want),
                                                             len(got))
    return None


@per_reader("map_count equals the VMAs in the tree, mm_users the threads")
def check_counts(p, r):
    bad = need(r, "mm")
    if bad:
        return bad
    mm = r["mm"]
    in_tree = len([v for v in mm["vmas"] if v["kind"] != "gate"])
    return (diff_values("field map_count", in_tree, mm["map_count"]) or
            diff_values("field mm_users", p["status"].get("Threads"),
                        mm["mm_users"]))


@per_reader("the maple tree walk found no inconsistency (a parked "
            "process's tree is whole)")
def check_inconsistencies(p, r):
    bad = need(r, "mm")
    if bad:
        return bad
    return diff_values("field inconsistencies", 0,
                       r["mm"].get("inconsistencies"))


# The tree parity.sh made wrong: the root's pivot[1] written below its
# pivot[0] (the walk's one problem, "pivot@1"; the subtrees of slots 1 on
# are not listed) and the vm_start of the first VMA of the leftmost leaf
# one page lower (marked "!!").
@per_reader("on the tree made wrong (root pivot[1] below pivot[0], a "
            "vm_start one page off): VMAs listed, 2 inconsistencies, one "
            "problem line (pivot@1), one VMA tree_range_differs")
def check_badmm(p, r):
    bad = need(r, "badmm", "badmm lines", "mm")
    if bad:
        return bad
    b, lines = r["badmm"], r["badmm lines"]
    odd = [v["start"] for v in b["vmas"] if v.get("tree_range_differs")]
    if len(lines) != 1 or "pivot@1 below the one before" not in lines[0]:
        return "problem lines {!r}".format(lines)
    if len(odd) != 1:
        return "VMAs marked: {!r}".format(odd)
    if b.get("inconsistencies") != 2:
        return "inconsistencies {!r}, want 2".format(b.get("inconsistencies"))
    if not 1 < len(b["vmas"]) < len(r["mm"]["vmas"]):
        return "{} VMAs listed, {} in the whole tree".format(
            len(b["vmas"]), len(r["mm"]["vmas"]))
    return None


@per_reader("mm rss counters equal /proc/PID/status (RssFile, RssAnon, "
            "RssShmem, VmSwap, VmRSS)")
def check_status(p, r):
    bad = need(r, "rss")
    if bad:
        return bad
    mmc = r["rss"]["mm_counters"]
    st = p["status"]
    for key, field in (("RssFile", "filepages"), ("RssAnon", "anonpages"),
                       ("RssShmem", "shmempages"), ("VmSwap", "swapents")):
        bad = diff_values("field mm_counters.{} ({} / 4 kB)".format(
            field, key), st.get(key, -1) // PAGE_KB, mmc.get(field))
        if bad:
            return bad
    return diff_values("field rss_mm (VmRSS / 4 kB)",
                       st.get("VmRSS", -1) // PAGE_KB, r["rss"]["rss_mm"])


@per_reader("thread rss deltas, rss_mm and rss_split equal pfscale's "
            "debugfs rss view")
def check_deltas(p, r):
    bad = need(r, "rss")
    if bad:
        return bad
    want = p["rss"]["threads"]
    got = dict((t["pid"], t) for t in r["rss"]["threads"])
    if sorted(want) != sorted(got):
        return "field threads: debugfs {}, reader {}".format(sorted(want),
                                                            sorted(got))
    deltas = 0
    for tid, w in sorted(want.items()):
        for k in ("events", "filepages", "anonpages", "swapents",
                  "shmempages"):
            g = got[tid]["events"] if k == "events" else \
                got[tid]["delta"][k]
            bad = diff_values("thread {} field {}".format(tid, k), w[k], g)
            if bad:
                return bad
        deltas += abs(w["anonpages"])
    if deltas < 4 + 7 + 10 + 13:
        return "field delta_sum: the workers' unsynced deltas are missing " \
            "(anon deltas add up to {})".format(deltas)
    for k in ("rss_mm", "rss_split"):
        bad = diff_values("field " + k, p["rss"].get(k), r["rss"][k])
        if bad:
            return bad
    return None


def vma_pages(r, start, end):
    """(present pages with a struct page, 2M leaves) of the reader's
    whole-space runs in [start, end): smaps' Rss leaves out special pages
    (the zero page); a run holding one lies inside one VMA."""
    n = huge = 0
    for run in r["range"]["runs"]:
        s, e = int(run["start"], 16), int(run["end"], 16)
        lo, hi = max(s, start), min(e, end)
        if lo < hi:
            n += ((hi - lo) >> PAGE_SHIFT) - run["special"]
            if "2M" in run["leaves"] and lo <= s and e <= hi:
                huge += run["leaves"]["2M"]
    return n, huge


@per_reader("present pages per VMA equal smaps Rss, 2M leaves AnonHugePages "
            "(one walk of all user space)")
def check_smaps(p, r):
    bad = need(r, "range", "mm")
    if bad:
        return bad
    for v in r["mm"]["vmas"]:
        if v["kind"] == "gate":
            continue
        start, end = int(v["start"], 16), int(v["end"], 16)
        sm = p["smaps"].get(start)
        if sm is None:
            return "VMA 0x{:x}: no smaps entry".format(start)
        n, huge = vma_pages(r, start, end)
        bad = (diff_values("VMA 0x{:x} field present pages (smaps Rss / 4 kB)"
                           .format(start), sm[0] // PAGE_KB, n) or
               diff_values("VMA 0x{:x} field 2M leaves (smaps AnonHugePages"
                           " / 2048 kB)".format(start), sm[2] // 2048, huge))
        if bad:
            return bad
    want_swap = sum(s[1] for s in p["smaps"].values()) // PAGE_KB
    return diff_values("field not_present.swap (smaps Swap / 4 kB)",
                       want_swap, r["range"]["not_present"].get("swap", 0))


@per_reader("runs and swap entries of each region equal pagemap's "
            "(THP, PROT_NONE, swapped, file, shared, workers)")
def check_pagemap(p, r):
    names = [n for n, _, _ in p["regions"]]
    if not {"thp", "protnone", "swapped", "shared_ro_file"} <= set(names):
        return "the helper's regions are missing: {}".format(names)
    for name, start, end in p["regions"]:
        bad = need(r, "region " + name)
        if bad:
            return bad
        got = r["region " + name]
        pages = []
        swaps = 0
        for va in range(start, end, 1 << PAGE_SHIFT):
            e = p["pagemap"].get(va)
            pages.append((va, e[1] if e and e[0] == "present" else None))
            swaps += bool(e and e[0] == "swap")
        want = decode.runs_from_pagemap(pages, PAGE_SHIFT)
        runs = [(int(x["start"], 16), x["pfn"], x["pages"])
                for x in got["runs"]]
        if runs != want:
            return "region {} field runs (start, pfn, pages): pagemap {}, " \
                "reader {}".format(name, [(hex(a), hex(b), c)
                                          for a, b, c in want],
                                   [(hex(a), hex(b), c) for a, b, c in runs])
        bad = diff_values("region {} field not_present.swap".format(name),
                          swaps, got["not_present"].get("swap", 0))
        if bad:
            return bad
        if name == "thp" and got["runs"] and \
                got["runs"][0]["leaves"] != {"2M": 1}:
            return "region thp field leaves: {} (want one 2M leaf)".format(
                got["runs"][0]["leaves"])
    return None


@per_reader("pfscale counters equal debugfs")
def check_counters(p, r):
    bad = need(r, "counters")
    if bad:
        return bad
    want, got = p["counters"], r["counters"]["counters"]
    if not want:
        return "no debugfs counters in the console"
    for k in sorted(set(want) | set(got)):
        bad = diff_values("counter " + k, want.get(k), got.get(k))
        if bad:
            return bad
    return None


# --- the readers against each other --------------------------------------

VMA_KEYS = ("vma", "start", "end", "perms", "flags", "pgoff", "kind",
            "anon_vma", "name", "tree_range_differs")
MM_KEYS = ("pid", "tgid", "comm", "mm", "pgd", "mm_users", "mm_count",
           "map_count", "pgtables_bytes", "vm_flags_source", "maple_height",
           "maple_nodes", "inconsistencies")


def first_diff(where, a, b):
    if a != b:
        return "{}: {!r} vs {!r}".format(where, a, b)
    return None


@cross("mm (locks included) and every VMA field")
def cross_mm(a, b):
    bad = need(a, "mm") or need(b, "mm")
    if bad:
        return bad
    for k in MM_KEYS:
        bad = first_diff("field " + k, a["mm"].get(k), b["mm"].get(k))
        if bad:
            return bad
    for k in ("mmap_lock", "page_table_lock"):
        bad = first_diff("field " + k, a["mm"].get(k), b["mm"].get(k))
        if bad:
            return bad
    va, vb = a["mm"]["vmas"], b["mm"]["vmas"]
    for x, y in zip(va, vb):
        for k in VMA_KEYS:
            bad = first_diff("VMA {} field {}".format(x["start"], k),
                             x.get(k), y.get(k))
            if bad:
                return bad
    return first_diff("field len(vmas)", len(va), len(vb))


@cross("on the tree made wrong: the same problem lines, inconsistencies, "
       "maple nodes and every VMA field")
def cross_badmm(a, b):
    bad = need(a, "badmm", "badmm lines") or need(b, "badmm", "badmm lines")
    if bad:
        return bad
    bad = first_diff("problem lines", a["badmm lines"], b["badmm lines"])
    if bad:
        return bad
    return cross_mm({"mm": a["badmm"]}, {"mm": b["badmm"]})


@cross("rss: mm counters, thread deltas, rss_mm, rss_split")
def cross_rss(a, b):
    bad = need(a, "rss") or need(b, "rss")
    if bad:
        return bad
    for k in ("pid", "tgid", "comm", "mm", "mm_counters", "delta_sum",
              "split_counters", "rss_mm", "rss_split"):
        bad = first_diff("field " + k, a["rss"][k], b["rss"][k])
        if bad:
            return bad
    ta = sorted((t["pid"], t["comm"], t["events"], sorted(t["delta"].items()))
                for t in a["rss"]["threads"])
    tb = sorted((t["pid"], t["comm"], t["events"], sorted(t["delta"].items()))
                for t in b["rss"]["threads"])
    return first_diff("field threads", ta, tb)


@cross("page-table runs of all user space (start, end, pfn, pages, leaves, special)")
def cross_runs(a, b):
    bad = need(a, "range") or need(b, "range")
    if bad:
        return bad
    for k in ("levels", "present_pages", "not_present"):
        bad = first_diff("field " + k, a["range"][k], b["range"][k])
        if bad:
            return bad
    for x, y in zip(a["range"]["runs"], b["range"]["runs"]):
        for k in ("start", "end", "pfn", "pages", "leaves", "special"):
            bad = first_diff("run {} field {}".format(x["start"], k),
                             x[k], y[k])
            if bad:
                return bad
    return first_diff("field len(runs)", len(a["range"]["runs"]),
                      len(b["range"]["runs"]))


@cross("pfscale counters, per CPU")
def cross_counters(a, b):
    bad = need(a, "counters") or need(b, "counters")
    if bad:
        return bad
    return (first_diff("field counters", a["counters"]["counters"],
                       b["counters"]["counters"]) or
            first_diff("field per_cpu", a["counters"]["per_cpu"],
                       b["counters"]["per_cpu"]) or
            first_diff("field desc", a["counters"]["desc"],
                       b["counters"]["desc"]))


# --- the guest tools against debugfs ----------------------------------------

def tool_json(p, name, lines):
    """The tool's --json lines, parsed; a string says what is wrong."""
    out = p["tools"][name]
    if len(out) != lines:
        return "{}: {} lines, want {}: {!r}".format(name, len(out), lines,
                                                    out[:2])
    try:
        return [json.loads(text) for text in out]
    except ValueError as e:
        return "{}: not JSON ({}): {!r}".format(name, e, out[0])


@tool("pfrss PID --json equals debugfs's rss view (threads, rss_mm, "
      "rss_split, rss_scan, the drifts)")
def tool_pfrss(p, readers):
    got = tool_json(p, "pfrss", 1)
    if isinstance(got, str):
        return got
    got, want = got[0], p["rss"]
    threads = dict((t["tid"], {"events": t["events"],
                               "filepages": t["file"],
                               "anonpages": t["anon"],
                               "swapents": t["swap"],
                               "shmempages": t["shmem"]})
                   for t in got["threads"])
    bad = diff_values("field threads", want["threads"], threads)
    for k in ("rss_mm", "rss_split", "rss_scan"):
        bad = bad or diff_values("field " + k, want.get(k), got[k])
    return (bad or
            diff_values("field split_minus_mm", got["rss_split"] -
                        got["rss_mm"], got["split_minus_mm"]) or
            diff_values("field scan_minus_split", got["rss_scan"] -
                        got["rss_split"], got["scan_minus_split"]))


@tool("pfstat -i 0.2 -n 2 --json: every debugfs counter with the kind of "
      "the kernel's table (gdb-live's), the values h_parity read (counting "
      "is off), delta 0")
def tool_pfstat(p, readers):
    got = tool_json(p, "pfstat", 2)
    if isinstance(got, str):
        return got
    first, second = got[0]["counters"], got[1]["counters"]
    bad = diff_values("field counters (names)", sorted(p["counters"]),
                      sorted(first))
    desc = readers.get("gdb-live", {}).get("counters", {}).get("desc")
    if not desc:
        return bad or "no kinds from gdb-live's pf-counters --json"
    for name in sorted(first):
        bad = (bad or
               diff_values("counter {} kind".format(name),
                           desc.get(name, {}).get("kind"),
                           first[name]["kind"]) or
               diff_values("counter {} value".format(name),
                           p["counters"][name], first[name]["value"]) or
               diff_values("counter {} delta".format(name), 0,
                           second[name]["delta"]))
    return bad


def main(argv):
    if argv[1:2] == ["--count"]:
        print(count())
        return 0
    if argv[1:2] == ["--fail-all"]:
        for name, _ in PER_READER:
            for rd in READERS:
                print("not ok - parity: {}: {} ({})".format(rd, name,
                                                            argv[2]))
        for name, _ in CROSS:
            for x, y in PAIRS:
                print("not ok - parity: {} = {}: {} ({})".format(
                    x, y, name, argv[2]))
        for name, _ in TOOLS:
            print("not ok - parity: guest tools: {} ({})".format(name,
                                                                 argv[2]))
        return 0
    proc = read_proc(argv[1])
    readers = {}
    for arg in argv[2:]:
        name, _, path = arg.partition("=")
        name, _, sec = name.partition(":")
        r = read_reader(path, proc["regions"], [sec] if sec else None)
        if "error" in r and sec:
            r = {"error {}".format(sec): r["error"]}
        readers.setdefault(name, {}).update(r)
    for name, fn in PER_READER:
        for rd in READERS:
            try:
                bad = fn(proc, readers.get(rd, {"error": "not run"}))
            except (KeyError, IndexError, TypeError, ValueError) as e:
                bad = "malformed output: {}: {}".format(type(e).__name__, e)
            print("{} - parity: {}: {}{}".format(
                "not ok" if bad else "ok", rd, name,
                " ({})".format(bad) if bad else ""))
    for name, fn in CROSS:
        for x, y in PAIRS:
            try:
                bad = fn(readers.get(x, {"error": "not run"}),
                         readers.get(y, {"error": "not run"}))
            except (KeyError, IndexError, TypeError, ValueError) as e:
                bad = "malformed output: {}: {}".format(type(e).__name__, e)
            print("{} - parity: {} = {}: {}{}".format(
                "not ok" if bad else "ok", x, y, name,
                " ({})".format(bad) if bad else ""))
    for name, fn in TOOLS:
        try:
            bad = fn(proc, readers)
        except (KeyError, IndexError, TypeError, ValueError) as e:
            bad = "malformed output: {}: {}".format(type(e).__name__, e)
        print("{} - parity: guest tools: {}{}".format(
            "not ok" if bad else "ok", name,
            " ({})".format(bad) if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
