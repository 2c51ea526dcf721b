#!/usr/bin/env python3
# The JSON checks of tests/host/gdb.sh, one named function each, so that
# gdb.sh has no Python in strings:
#
#   gdb_checks.py CHECK ARG...
#
# exits 0 if the check holds, 1 (with the reason on stdout) if not; the
# JSON arguments are the gdb commands' --json output.
import json
import re
import sys


class Fail(Exception):
    pass


def want(cond, why):
    if not cond:
        raise Fail(why)


def js(text):
    try:
        return json.loads(text)
    except ValueError:
        raise Fail("not JSON: {!r}".format(text[:200]))


def lines(text):
    return [js(x) for x in text.splitlines() if x.strip()]


def regions(text):
    """{tgid: (lo, hi)} from "PID START END" lines."""
    out = {}
    for line in text.splitlines():
        pid, lo, hi = line.split()
        out[int(pid)] = (int(lo, 16), int(hi, 16))
    return out


def in_region(loss, regs):
    lo_hi = regs.get(loss["tgid"])
    return lo_hi is not None and lo_hi[0] <= int(loss["address"], 16) < lo_hi[1]


CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


@check
def thp_walk(walk, pfn0):
    """pf-walk in the THP region (page 5 + 0x123): a 2M huge pmd, PFN =
    pagemap's page 0 + 5, and that physical address."""
    w = js(walk)
    pfn = int(pfn0) + 5
    want(w["present"] and w["leaf_level"] == "pmd" and
         w["page_size"] == "2M", "not a present 2M pmd leaf")
    want("huge" in w["steps"][-1]["flags"].split(), "no huge flag")
    want(w["pfn"] == pfn, "pfn {} != {}".format(w["pfn"], pfn))
    want(int(w["phys"], 16) == pfn * 4096 + 0x123, "phys " + w["phys"])


@check
def swap_walk(walk, swapped, swp_type, offset):
    """pf-walk on a paged-out page: its pte a swap entry whose type and
    offset equal pagemap's (8 pages were paged out)."""
    w = js(walk)
    sw = w["steps"][-1].get("swap", {})
    want(int(swapped) == 8, "the helper paged out {} pages".format(swapped))
    want(not w["present"] and w["steps"][-1]["level"] == "pte",
         "not a non-present pte")
    want(sw.get("kind") == "swap", "kind {}".format(sw.get("kind")))
    want(sw.get("type") == int(swp_type), "type {} != {}".format(
        sw.get("type"), swp_type))
    want(sw.get("offset") == int(offset, 16) and sw["offset"] > 0,
         "offset {} != {}".format(sw.get("offset"), offset))


@check
def swap_range(rng):
    """pf-range over the 8 paged-out pages: none present, 8 swap."""
    r = js(rng)
    want(r["present_pages"] == 0 and r["runs"] == [], "present pages")
    want(r["not_present"] == {"swap": 8}, "not_present {}".format(
        r["not_present"]))


@check
def four_levels(walk):
    """levels 4 from CR4.LA57=0 and __pgtable_l5_enabled=0, 4 steps."""
    w = js(walk)
    want(w["levels"] == 4, "levels {}".format(w["levels"]))
    want([s["level"] for s in w["steps"]] == ["pgd", "pud", "pmd", "pte"],
         "steps {}".format([s["level"] for s in w["steps"]]))
    want("CR4.LA57=0" in w["levels_source"] and
         "__pgtable_l5_enabled=0" in w["levels_source"], w["levels_source"])


@check
def counters_counted(counters):
    """pf-counters --json: anon_fault_locked > 0."""
    c = js(counters)["counters"]
    want(c.get("anon_fault_locked", 0) > 0, "anon_fault_locked {}".format(
        c.get("anon_fault_locked")))


@check
def rss_threads(rss, pid, nthreads):
    """pf-rss --json: the pid and all its threads."""
    r = js(rss)
    pids = [t["pid"] for t in r["threads"]]
    want(r["pid"] == int(pid) and int(pid) in pids, "pid {}".format(pid))
    want(len(pids) == int(nthreads), "{} threads, want {}".format(
        len(pids), nthreads))


@check
def rss_split_anon(rss, touched):
    """pf-rss --json: split anon pages >= the pages touched."""
    r = js(rss)
    want(r["split_counters"]["anonpages"] >= int(touched),
         "anonpages {}".format(r["split_counters"]["anonpages"]))


@check
def mm_vmas(mm):
    """Print pf-mm --json's VMAs as "START END PERMS" lines (for a diff
    against maps); fails only on bad JSON."""
    for v in js(mm)["vmas"]:
        print(v["start"], v["end"], v["perms"])


@check
def mm_rss(mm, rss_mm, rss_split):
    """pf-mm --json: rss_mm and rss_split equal the guest's."""
    r = js(mm)["rss"]
    want((r["rss_mm"], r["rss_split"]) == (int(rss_mm), int(rss_split)),
         "pf-mm {} {}, guest {} {}".format(r["rss_mm"], r["rss_split"],
                                           rss_mm, rss_split))


@check
def mm_threads(mm, pid, nthreads):
    """pf-mm --json: the threads are mm_users, map_count the tree's VMAs,
    the mmap_lock decoded, page tables allocated."""
    r = js(mm)
    pids = [t["pid"] for t in r["threads"]]
    want(r["pid"] == int(pid) and int(pid) in pids, "pid")
    want(len(pids) == int(nthreads) == r["mm_users"],
         "{} threads, want {}, mm_users {}".format(len(pids), nthreads,
                                                  r["mm_users"]))
    in_tree = len([v for v in r["vmas"] if v["kind"] != "gate"])
    want(r["map_count"] == in_tree, "map_count {} vs {} VMAs".format(
        r["map_count"], in_tree))
    want(r["mmap_lock"]["state"], "no mmap_lock state")
    want(r["pgtables_bytes"] > 0, "pgtables_bytes 0")


def mm_text(text):
    """pf-mm's text: (its problem lines, "pf-mm: ..." but not its warnings;
    the VMA rows marked "!!"; the VMA rows; the inconsistencies its summary
    line counts, 0 without)."""
    rows = [x for x in text.splitlines()
            if re.match(r"^ *[0-9a-f]+-[0-9a-f]+ +[r-][w-][x-][ps] ", x)]
    problems = [x for x in text.splitlines() if x.startswith("pf-mm: ") and
                not x.startswith("pf-mm: warning: ")]
    summary = [re.match(r"^\d+ VMA\(s\)(, (\d+) inconsistencies "
                        r"\(marked !!\))?:$", x) for x in text.splitlines()]
    summary = [m for m in summary if m]
    want(len(summary) == 1, "{} summary lines".format(len(summary)))
    return (problems, [x for x in rows if "  !! tree range " in x], rows,
            int(summary[0].group(2) or 0))


def vma_keys(vmas):
    return [(v["start"], v["end"], v["perms"]) for v in vmas]


@check
def mm_inconsistent(good, text, jtext, problem, marked):
    """pf-mm on a tree made wrong (text; --json with its lines): the walk
    carried on and listed VMAs; one problem line containing PROBLEM (none
    if empty), MARKED rows marked "!!"; the summary and "inconsistencies"
    count both; the --json output says the same problem lines, then one
    JSON line."""
    want(re.search(r"^CORRUPT ", text, re.M), "no CORRUPT line: nothing "
         "was written")
    problems, marks, rows, n = mm_text(text)
    want(len(problems) == (1 if problem else 0) and
         all(problem in x for x in problems),
         "problem lines {!r}, want one with {!r}".format(problems, problem)
         if problem else "problem lines {!r}, want none".format(problems))
    want(len(marks) == int(marked), "{} rows marked !!, want {}: {!r}".format(
        len(marks), marked, marks))
    want(len(rows) > 1, "{} VMA rows".format(len(rows)))
    want(n == len(problems) + len(marks) and n >= 1,
         "summary counts {} inconsistencies, {} problem lines and {} "
         "marked rows".format(n, len(problems), len(marks)))
    jlines = [x for x in jtext.splitlines() if x.strip()]
    want([x for x in jlines if not x.startswith("{")] == problems,
         "--json says {!r}, text {!r}".format(
             [x for x in jlines if not x.startswith("{")], problems))
    j = js("\n".join(x for x in jlines if x.startswith("{")))
    want(j.get("inconsistencies") == n, "--json inconsistencies {!r}, "
         "text {}".format(j.get("inconsistencies"), n))
    odd = [v for v in j["vmas"] if v.get("tree_range_differs")]
    want(len(odd) == int(marked), "{} VMAs tree_range_differs, want "
         "{}".format(len(odd), marked))
    g = vma_keys(js(good)["vmas"])
    got = vma_keys(v for v in j["vmas"] if not v.get("tree_range_differs"))
    want(got and all(v in g for v in got), "VMAs not the tree's: {!r}".format(
        [v for v in got if v not in g][:3]))
    want(len(j["vmas"]) == len(g) if int(marked) else len(j["vmas"]) < len(g),
         "{} VMAs listed of {}".format(len(j["vmas"]), len(g)))


@check
def mm_restored(good, text, jtext):
    """pf-mm after the restore: 0 inconsistencies (before the corruption
    too), nothing said or marked, the VMAs as before it."""
    want(re.search(r"^CORRUPT restored ", text, re.M), "nothing restored")
    problems, marks, rows, n = mm_text(text)
    want(not problems and not marks and n == 0,
         "{} problem lines, {} marked, summary {}".format(
             len(problems), len(marks), n))
    g, j = js(good), js("\n".join(x for x in jtext.splitlines()
                                  if x.startswith("{")))
    want(g.get("inconsistencies") == 0 and j.get("inconsistencies") == 0,
         "inconsistencies {!r} before, {!r} after".format(
             g.get("inconsistencies"), j.get("inconsistencies")))
    want(j["vmas"] == g["vmas"], "VMAs differ from before the corruption")
    want(len(rows) == len(g["vmas"]), "{} rows, {} VMAs".format(
        len(rows), len(g["vmas"])))


def kinds(counters):
    """{name: kind} from pf-counters --json's "desc" (the kernel's table)."""
    return {n: d["kind"] for n, d in js(counters)["desc"].items()}


@check
def three_losses(watch, counters):
    """pf-race-watch --count 3 --json: 3 reports of counters the kernel
    calls lost (their kind in pf-counters --json)."""
    ls, kind = lines(watch), kinds(counters)
    want(len(ls) == 3, "{} reports".format(len(ls)))
    want(all(kind.get(x["counter"]) == "lost" for x in ls),
         "counters {}".format([(x["counter"], kind.get(x["counter"]))
                               for x in ls]))


@check
def losses_in_regions(watch, regs, paged):
    """Every loss is in the region of its tgid's helper, its found PTE
    present; in the regions that are paged out (PAGED: the swap and
    reclaim helpers'), the winner may also be the page-out, which leaves a
    swap entry (not present, not none)."""
    ls, rg, pg = lines(watch), regions(regs), regions(paged)
    want(ls, "no loss")
    for x in ls:
        want(in_region(x, rg), "address {} of tgid {} outside {}".format(
            x["address"], x["tgid"], rg))
        found = int(x["found"], 16)
        want((x["found_present"] and found & 1) or
             (in_region(x, pg) and not found & 1 and found != 0),
             "found {} {}".format(x["found"], x.get("found_flags", "")))


def one_loss(watch, regs, counter, holds, why):
    ls, rg = lines(watch), regions(regs)
    want(len(ls) == 1, "{} reports".format(len(ls)))
    x = ls[0]
    want(x["counter"] == counter, "counter {}".format(x["counter"]))
    want(in_region(x, rg), "address {} of tgid {} outside {}".format(
        x["address"], x["tgid"], rg))
    want(holds(x), why + ": {}".format(json.dumps(x)[:300]))


@check
def swapin_loss(watch, regs):
    """A swapin_lost loss expected its swap PTE and found the winner's
    present page."""
    one_loss(watch, regs, "swapin_lost", lambda x: x["expected_flags"]
             .startswith("not present: swap entry type ") and
             x["found_present"] and x.get("found_level", "pte") == "pte",
             "not a swap entry replaced by a present pte")


@check
def populate_loss(watch, regs):
    """A pte_table_cmpxchg_lost loss found the winner's pmd (a present
    table), expected none, and took its address from the fault."""
    one_loss(watch, regs, "pte_table_cmpxchg_lost", lambda x:
             x["found_level"] == "pmd" and int(x["expected"], 16) == 0 and
             x["found_present"] and not int(x["found"], 16) & 0x80 and
             x["source"] != "cr2", "not the winner's pte table")


@check
def busy_loss(watch, regs):
    """A busy_pte_fault expected a PTE parked as pfscale-busy."""
    one_loss(watch, regs, "busy_pte_fault", lambda x: x["expected_flags"] ==
             "not present: pte marker pfscale-busy", "not a busy marker")


@check
def backout_loss(watch, regs):
    """An anon_cmpxchg_backout loser expected an empty PTE and found a
    present one."""
    one_loss(watch, regs, "anon_cmpxchg_backout",
             lambda x: int(x["expected"], 16) == 0 and x["found_present"],
             "not empty -> present")


@check
def lost_moved(before, after, least):
    """The counters of kind lost moved by at least LEAST."""
    b, a, kind = js(before)["counters"], js(after)["counters"], kinds(after)
    d = sum(a[n] - b[n] for n in a if kind[n] == "lost")
    print(d)
    want(d >= int(least), "moved by {}".format(d))


def main(argv):
    if len(argv) < 2 or argv[1] not in CHECKS:
        print("usage: gdb_checks.py {} ARG...".format("|".join(CHECKS)))
        return 2
    try:
        CHECKS[argv[1]](*argv[2:])
    except Fail as e:
        print("{}: {}".format(argv[1], e))
        return 1
    except (KeyError, IndexError, TypeError, ValueError) as e:
        print("{}: malformed output: {}: {}".format(argv[1],
                                                    type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
