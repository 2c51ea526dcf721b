#!/usr/bin/env python3
# The golden vectors of tests/vectors/decode.json, run against both
# readers' decode rules: gdb-scripts/pfscale_gdb/decode.py (imported) and
# the crash extension's decode core, crash/decode.c, as the host program
# build/decode-vectors (argv[1]), which reads one vector a line in plain
# words and prints one result a line. Each result is put in one canonical
# text form (canon_*), which the expected value is put in too. Prints TAP:
# for every vector one result for Python and one for C.
import json
import os
import subprocess
import sys
import urllib.parse

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(top, "gdb-scripts"))
from pfscale_gdb import decode as d  # noqa: E402

VECTORS = os.path.join(top, "tests", "vectors", "decode.json")
SIZES = {12: "4K", 21: "2M", 30: "1G"}


def num(s):
    return int(s, 0) if isinstance(s, str) else s


def canon_pte(present, leaf, phys):
    return "{:d} {:d} 0x{:x}".format(bool(present), bool(leaf), phys)


def canon_kinds(kinds):
    if kinds is None:
        return "refused"
    return " ".join("{}:{}".format(t, kinds[t]) for t in sorted(kinds))


def canon_walk(runs, total, absent):
    """runs: [(start, end, pfn, {"4K": n}, special)]"""
    form = "run 0x{:x}-0x{:x} pfn 0x{:x} leaves {} special {}; "
    text = "".join(form.format(
        s, e, pfn, ",".join("{}:{}".format(k, leaves[k])
                            for k in ("4K", "2M", "1G") if leaves.get(k)),
        special) for s, e, pfn, leaves, special in runs)
    return text + "total {}".format(total) + "".join(
        " {}:{}".format(k, absent[k]) for k in sorted(absent))


def canon_maple(error, leaf, slots):
    return "{} leaf={:d}".format(error, bool(leaf)) + "".join(
        " 0x{:x}-0x{:x}:0x{:x}".format(f, l, e) for f, l, e in slots)


def canon_rwsem(state, flags):
    return "{};{}".format(state, ",".join(flags))


def canon_vm(r):
    return "refused" if r is None else "{} {}".format(*r)


# Each kind: (C input line, Python's result, the expected result), all but
# the input in canonical form.
def k_pte(v, lay, paging, geo, tables):
    e, shift = num(v["entry"]), v["shift"]
    w = v["want"]
    leaf = d.is_leaf(e, shift, lay)
    # phys: of the page a leaf maps, else of the next table
    return ("pte {} {}".format(v["entry"], shift),
            canon_pte(d.is_present(e, lay), leaf, d.entry_phys(
                e, shift if leaf else lay.page_shift, lay)),
            canon_pte(w["present"], w["leaf"], num(w["phys"])))


def k_swap_kind(v, lay, paging, geo, tables):
    return ("swap_kind " + v["entry"],
            d.swap_entry(num(v["entry"]), paging)["kind"], v["want"])


SWAP_NUMS = ("MAX_SWAPFILES", "MAX_SWAPFILES_SHIFT", "SWP_TYPE_BITS",
             "SWP_HWPOISON_NUM", "SWP_MIGRATION_NUM", "SWP_DEVICE_NUM",
             "SWP_PTE_MARKER_NUM", "SWP_SWAPIN_ERROR_NUM")


def k_swap_kinds(v, lay, paging, geo, tables):
    n = v["nums"]
    try:
        got = d.swap_kinds(n)
    except d.DecodeError:
        got = None
    want = v["want"]
    return ("swap_kinds " + " ".join(str(n[k]) for k in SWAP_NUMS),
            canon_kinds(got),
            canon_kinds(None if want is None else
                        dict((int(t), k) for t, k in want.items())))


def k_walk(v, lay, paging, geo, tables):
    t = dict((num(tb), dict((int(i), num(e)) for i, e in ents.items()))
             for tb, ents in tables[v["tables"]].items())
    p = d.Paging(v["levels"], lay)
    absent = {}
    runs = d.range_runs(num(v["pgd"]), num(v["start"]), num(v["end"]), p,
                        lambda tb: [t.get(tb, {}).get(i, 0)
                                    for i in range(lay.ptrs)], absent)
    got = canon_walk([(va, va + (n << lay.page_shift), pfn,
                       dict((SIZES[s], c) for s, c in kinds.items()), sp)
                      for va, pfn, n, kinds, sp in runs],
                     sum(r[2] for r in runs), absent)
    w = v["want"]
    want = canon_walk([(num(r["start"]), num(r["end"]), num(r["pfn"]),
                        r["leaves"], r["special"]) for r in w["runs"]],
                      w["total"], w["not_present"])
    line = "walk {} {} {} {}".format(v["levels"], v["pgd"], v["start"],
                                     v["end"])
    for tb in sorted(t):
        for i in sorted(t[tb]):
            line += " 0x{:x} {} 0x{:x}".format(tb, i, t[tb][i])
    return line, got, want


def k_maple(v, lay, paging, geo, tables):
    words = [0] * (geo["node_size"] // 8)
    for i, x in v["words"].items():
        words[int(i)] = num(x)
    got = canon_maple(*d.maple_node(geo, words, v["type"], num(v["min"]),
                                    num(v["max"])))
    w = v["want"]
    want = canon_maple(w["error"], w["leaf"],
                       [tuple(num(x) for x in s) for s in w["slots"]])
    return ("maple {} {} {} ".format(v["type"], v["min"], v["max"]) +
            " ".join("{} {}".format(i, x) for i, x in v["words"].items()),
            got, want)


def canon_walk_tree(entries, nodes, bad):
    return "walk" + "".join(" 0x{:x}-0x{:x}:0x{:x}".format(*e)
                            for e in entries) + "".join(
        " !{}@0x{:x}".format(what, node) for what, node in bad) + \
        " nodes={}".format(nodes)


def k_maple_walk(v, lay, paging, geo, tables):
    nodes = dict((num(n), dict((int(i), num(x)) for i, x in words.items()))
                 for n, words in v["nodes"].items())

    def read(node):
        if node not in nodes:
            return None
        words = [0] * (geo["node_size"] // 8)
        for i, x in nodes[node].items():
            words[i] = x
        return words
    out, n, bad = d.maple_walk(num(v["root"]), geo, lay, read)
    # C reports what is wrong as it finds it, among the entries: compare
    # the entries and the errors each in their own order
    got = canon_walk_tree(out, n, [(w, node) for w, node, _, _ in bad])
    w = v["want"]
    want = canon_walk_tree([tuple(num(x) for x in e) for e in w["entries"]],
                           w["nodes"], [(b[0], num(b[1])) for b in w["bad"]])
    line = "maple_walk " + v["root"] + "".join(
        " 0x{:x} {} 0x{:x}".format(node, i, x)
        for node in sorted(nodes) for i, x in sorted(nodes[node].items()))
    return line, got, want


def k_rwsem(v, lay, paging, geo, tables):
    return ("rwsem " + v["count"],
            canon_rwsem(*d.rwsem_state(num(v["count"]), lay)),
            canon_rwsem(*v["want"]))


def k_qspinlock(v, lay, paging, geo, tables):
    return "qspinlock " + v["val"], d.qspin_state(num(v["val"])), v["want"]


def k_rss(v, lay, paging, geo, tables):
    return ("rss " + " ".join("{} {}".format(n, c) for n, c in v["counters"]),
            str(d.rss_sum(dict(v["counters"]))), str(v["want"]))


def k_mm_counters(v, lay, paging, geo, tables):
    enum = dict(v["enum"])
    canon = lambda pairs: " ".join("{}:{}".format(i, n) for i, n in pairs)
    return ("mm_counters {} ".format(enum.get("NR_MM_COUNTERS", 0)) +
            " ".join("{} {}".format(n, c) for n, c in v["enum"]),
            canon(d.mm_counter_names(enum)), canon(v["want"]))


def k_vm_flags(v, lay, paging, geo, tables):
    table = v["table"]
    try:
        vm, source = d.vm_flags_from_table(
            None if table is None else [tuple(x) for x in table])
        got = (d.perms(num(v["flags"]), vm), source)
    except d.DecodeError:
        got = None
    line = "vm_flags " + v["flags"] + "".join(
        " {} {}".format(n, m) for n, m in table or [])
    return line, canon_vm(got), canon_vm(v["want"])


def k_dentry(v, lay, paging, geo, tables):
    return ("dentry {:d} ".format(v["root"]) + " ".join(v["names"]),
            d.dentry_path(v["names"], v["root"]), v["want"])


def json_tokens(doc):
    """The token words of decode_vectors.c's json kind for doc."""
    q = lambda s: urllib.parse.quote(s, safe="")
    if isinstance(doc, dict):
        return ["{"] + sum((["n:" + q(k)] + json_tokens(x)
                            for k, x in doc.items()), []) + ["}"]
    if isinstance(doc, list):
        return ["["] + sum((json_tokens(x) for x in doc), []) + ["]"]
    if doc is None:
        return ["z"]
    if isinstance(doc, bool):
        return ["b:{:d}".format(doc)]
    if isinstance(doc, int):
        return ["i:{}".format(doc)]
    if doc.startswith("0x"):        # the writer's hex strings
        return ["h:" + doc]
    return ["s:" + q(doc)]


def k_json(v, lay, paging, geo, tables):
    """lib/json_writer.h must print what json.dumps() prints: spaced (gdb's
    --json and crash's -j), compact (the bench records), or compact members
    of a list (doc's members, no brackets: the plugin's window_list)."""
    style = v.get("style", "spaced")
    seps = (", ", ": ") if style == "spaced" else (",", ":")
    docs = v["doc"] if style == "members" else [v["doc"]]
    return ("json {} {}".format(style, " ".join(sum(
        (json_tokens(x) for x in docs), []))),
        ",".join(json.dumps(x, separators=seps) for x in docs), v["want"])


KINDS = (("pte", k_pte), ("swap_kind", k_swap_kind),
         ("swap_kinds", k_swap_kinds), ("walk", k_walk), ("maple", k_maple),
         ("rwsem", k_rwsem), ("qspinlock", k_qspinlock), ("rss", k_rss),
         ("mm_counters", k_mm_counters), ("vm_flags", k_vm_flags),
         ("dentry", k_dentry), ("json", k_json),
         ("maple_walk", k_maple_walk))


def geometry(g):
    """decode.maple_node()'s geo from the vectors' maple_geometry."""
    nodes = {g["dense"]: (0, 0, g["dense_slot"], g["slots"][g["dense"]])}
    for t, p, s in (("leaf_64", "range_64_pivot", "range_64_slot"),
                    ("range_64", "range_64_pivot", "range_64_slot"),
                    ("arange_64", "arange_64_pivot", "arange_64_slot")):
        nodes[g[t]] = (g[p], g["pivots"][g[t]], g[s], g["slots"][g[t]])
    return {"nodes": nodes, "dense": g["dense"], "leaf": g["leaf_64"],
            "node_size": g["node_size"]}


def geometry_line(g):
    return "maple_geo " + " ".join(str(x) for x in (
        [g["dense"], g["leaf_64"], g["range_64"], g["arange_64"]] +
        g["slots"] + g["pivots"] +
        [g["range_64_pivot"], g["range_64_slot"], g["arange_64_pivot"],
         g["arange_64_slot"], g["dense_slot"], g["node_size"]]))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: vectors.py BUILD/decode-vectors")
    v = json.load(open(VECTORS))
    lay = d.Layout(v["layout"], VECTORS)
    paging = d.Paging(4, lay)
    geo = geometry(v["maple_geometry"])
    lines = ["def {} {}".format(k, x) for k, x in sorted(v["layout"].items())]
    lines.append(geometry_line(v["maple_geometry"]))
    cases = []
    for kind, fn in KINDS:
        for i, vec in enumerate(v[kind]):
            name = "{} {}: {}".format(kind, i, vec.get("name", vec.get(
                "count", vec.get("val", ""))))
            try:
                line, got, want = fn(vec, lay, paging, geo, v["tables"])
            except Exception as e:  # a rule that raises is a failed check
                line, got, want = "", "raised {!r}".format(e), ""
            lines.append(line)
            cases.append((name, got, want))
    out = subprocess.run([sys.argv[1]], input="\n".join(lines) + "\n",
                         stdout=subprocess.PIPE, universal_newlines=True,
                         check=False).stdout.splitlines()
    print("1..{}".format(2 * len(cases)))
    for (name, got, want), c_got in zip(cases, out + [""] * len(cases)):
        for lang, res in (("decode.py", got), ("decode.c", c_got)):
            ok = res == want
            print("{}ok - vectors: {}: {}".format("" if ok else "not ", lang,
                                                  name))
            if not ok:
                print("#   got:  {}\n#   want: {}".format(res, want))


main()
