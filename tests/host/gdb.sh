#!/bin/bash
# Host-side test of the pfscale gdb helpers (gdb-scripts/pfscale.py): boot
# the guest with a gdbstub, let tests/guest/h_gdb_map map a known region and
# a 2 MiB THP region and tests/guest/h_gdb_mm print its /proc/self/maps and
# RSS, attach gdb and check pf-walk (4K and huge pmd, the paging levels),
# pf-range, pf-counters, pf-rss and pf-mm against what the guest saw; boot again with pfscale.atomic_pte=1 and tests/guest/h_race_loop
# racing, and check that pf-race-watch reports real losses in its region;
# then check `make gdb` non-interactively, the loader's one-line errors and
# the special swap types against .config (no guest).
# Prints TAP-style lines.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/gdb.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
art=${PFSCALE_ART:?PFSCALE_ART not set}
initrd=${PFSCALE_INITRD:?PFSCALE_INITRD not set}
out=${PFSCALE_OUT:-$top/build/test}
mkdir -p "$out"
log=$out/gdb-console.log
gout=$out/gdb.out
pages=64 touched=48

checks=("helper printed its GDBMAP line"
	"pf-walk PFN of page 0 equals pagemap's"
	"pf-range finds exactly $touched present pages"
	"helper's THP region is one huge pmd (AnonHugePages 2048 kB)"
	"pf-walk in the THP region: 2M huge pmd, PFN = pagemap's pfn0 + 5"
	"pf-range over the THP region: one present run of 512 pages, 2M x1"
	"pf-walk on a never-touched page of the region: pte not present (none)"
	"pf-walk on a paged-out page: a swap entry, type and offset equal pagemap's"
	"pf-range over the 8 paged-out pages: none present, 8 swap entries counted"
	"pf-walk detects 4-level paging (levels 4, p4d folded, CR4.LA57=0, __pgtable_l5_enabled=0)"
	"pf-counters --json has anon_fault_locked > 0"
	"pf-rss --json lists the pid and its threads"
	"pf-rss split anon pages >= $touched"
	"pf-walk on an unmapped address: one line, no traceback"
	"pf-rss on pid 99999: one clear line"
	"h_gdb_mm printed its maps and RSS"
	"pf-mm VMAs (start, end, perms) equal the guest's /proc/PID/maps"
	"pf-mm rss_mm and rss_split equal the guest's statm and debugfs rss"
	"pf-mm lists the threads, map_count equals the VMA count"
	"pf-mm table shows every VMA and the mmap_lock"
	"pf-mm on pid 99999: one clear line"
	"pf-mm on a kernel thread: one clear line"
	"no Python traceback in the gdb output"
	"h_race_loop same, populate and swap printed their regions (pfscale.atomic_pte=1)"
	"pf-race-watch --count 3 reports 3 losses of *_lost counters"
	"every loss is in its task's helper region, its found PTE present"
	"pf-race-watch --counter swapin_lost: a loss in the swap (or reclaim) helper's region, expected a swap entry, found it present"
	"pf-race-watch --counter pte_table_cmpxchg_lost --hw: a loss in the populate helper's region, found the winner's pmd (a present table)"
	"pf-race-watch --counter busy_pte_fault: a fault in the reclaim helper's region expected a pfscale-busy PTE marker"
	"pf-race-watch --hw on too many sites, an unknown --counter: one line each"
	"the lost-race counters moved by >= 5 across the watches"
	"pf-race-watch leaves no breakpoint behind, no traceback"
	"make gdb GDB_BATCH=...: boots, attaches, runs pf-counters, ends the guest"
	"scripts loaded without vmlinux-gdb.py: one line, no traceback"
	"the special swap types read from the kernel (swap_info[], symbols) equal those its .config allots"
	"on an unpatched kernel: pf-counters and pf-race-watch say so in one line")
echo "1..${#checks[@]}"
done_checks=0
ok() { echo "ok - gdb: ${checks[$done_checks]}"; done_checks=$((done_checks + 1)); }
notok() {
	echo "not ok - gdb: ${checks[$done_checks]}${1:+ ($1)}"
	done_checks=$((done_checks + 1))
}
check() { if [ "$1" = 0 ]; then ok; else notok "${2:-}"; fi; }
rest() {	# rest ok|skip|fail REASON: report every remaining check
	while [ $done_checks -lt ${#checks[@]} ]; do
		case $1 in
		skip) echo "ok - gdb: ${checks[$done_checks]} # SKIP $2" ;;
		*) echo "not ok - gdb: ${checks[$done_checks]} ($2)" ;;
		esac
		done_checks=$((done_checks + 1))
	done
}

if ! command -v gdb >/dev/null; then rest skip "no gdb"; exit 0; fi
if [ ! -f "$art/vmlinux" ] || [ ! -f "$art/vmlinux-gdb.py" ]; then
	rest skip "no vmlinux/vmlinux-gdb.py in $art"; exit 0
fi

# A free TCP port for the gdbstub.
port=$(free_port $((1234 + $$ % 1000)))

qpid=
cleanup() {
	[ -n "$qpid" ] || return
	local c
	stop_boot "$qpid"
	# A QEMU started while boot.sh was dying: ours is the one on our port.
	for c in $(pgrep -f -- "-gdb tcp::$port( |\$)"); do kill "$c" 2>/dev/null; done
	qpid=
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

rm -f "$log" "$gout"	# a stale log must not satisfy the wait below
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r gdbmm,gdbmap -g -p "$port" \
	-l "$log" -t 600 >"$out/gdb-boot.out" 2>&1 &
qpid=$!

line=$(wait_console "$log" 'GDBMAP pid=' 120 "$qpid")
if [ -z "$line" ]; then
	notok "no GDBMAP line in $log within 120 s"
	rest fail "no guest helper"
	exit 0
fi
ok
line=GDBMAP\ ${line#*GDBMAP }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
pid=$(field pid) addr=$(field addr) pfn0=$(field pfn0) nthreads=$(field threads)
end=$(printf '0x%x' $((addr + pages * 4096)))
echo "# guest: $line (gdbstub :$port)"
thp=$(tr -d '\r' <"$log" | grep -m1 '^GDBTHP pid=')
echo "# guest: ${thp:-no GDBTHP line}"
tfield() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$thp"; }
taddr=$(tfield addr) tpfn0=$(tfield pfn0) tpfn5=$(tfield pfn5)
[ -n "$taddr" ] || taddr=0x200000
tend=$(printf '0x%x' $((taddr + 2 * 1024 * 1024)))
twalk=$(printf '0x%x' $((taddr + 5 * 4096 + 0x123)))
untouched=$(printf '0x%x' $((addr + 50 * 4096)))
swp=$(tr -d '\r' <"$log" | grep -m1 '^GDBSWAP pid=')
echo "# guest: ${swp:-no GDBSWAP line}"
sfield() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$swp"; }
saddr=$(sfield addr)
[ -n "$saddr" ] || saddr=0x1000
send=$(printf '0x%x' $((saddr + 8 * 4096)))
tr -d '\r' <"$log" | sed -n 's/^GDBMM map //p' >"$out/gdbmm-maps"
mmline=$(tr -d '\r' <"$log" | grep -m1 '^GDBMM pid=')
mmpid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<<"$mmline")
[ -n "$mmpid" ] || mmpid=99998

timeout 300 gdb -batch -nx "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" \
	-ex "source $top/gdb-scripts/pfscale.py" \
	-ex "target remote :$port" \
	-ex 'echo @@walk\n' -ex "pf-walk $addr $pid" \
	-ex 'echo @@range\n' -ex "pf-range $addr $end $pid" \
	-ex 'echo @@thpwalk\n' -ex "pf-walk $twalk $pid --json" \
	-ex 'echo @@thpwalktext\n' -ex "pf-walk $taddr $pid" \
	-ex 'echo @@thprange\n' -ex "pf-range $taddr $tend $pid" \
	-ex 'echo @@untouched\n' -ex "pf-walk $untouched $pid" \
	-ex 'echo @@swapwalk\n' -ex "pf-walk $saddr $pid --json" \
	-ex 'echo @@swapwalktext\n' -ex "pf-walk $saddr $pid" \
	-ex 'echo @@swaprange\n' -ex "pf-range $saddr $send $pid --json" \
	-ex 'echo @@swaprangetext\n' -ex "pf-range $saddr $send $pid" \
	-ex 'echo @@walkjson\n' -ex "pf-walk $addr $pid --json" \
	-ex 'echo @@counters\n' -ex 'pf-counters --json' \
	-ex 'echo @@rss\n' -ex "pf-rss $pid --json" \
	-ex 'echo @@unmapped\n' -ex "pf-walk 0x1000 $pid" \
	-ex 'echo @@badpid\n' -ex 'pf-rss 99999' \
	-ex 'echo @@mmjson\n' -ex "pf-mm $mmpid --json" \
	-ex 'echo @@mm\n' -ex "pf-mm $mmpid" \
	-ex 'echo @@mmbadpid\n' -ex 'pf-mm 99999' \
	-ex 'echo @@mmkthread\n' -ex 'pf-mm 2' \
	-ex 'echo @@end\n' >"$gout" 2>&1
cleanup
section() { awk -v s="@@$1" '/^@@/ { on = ($0 == s); next } on' "$gout"; }

section walk | grep -q "pfn=$pfn0 "
check $? "want pfn=$pfn0: $(section walk | tail -1)"

section range | grep -q ": $touched present pages in "
check $? "$(section range | tail -1)"

[ "$(tfield anonhuge_kb)" = 2048 ] && [ -n "$tpfn0" ] &&
	[ "$tpfn5" = $((tpfn0 + 5)) ]
check $? "${thp:-no GDBTHP line}"

python3 -c '
import json, sys
w = json.loads(sys.argv[1])
pfn = int(sys.argv[2]) + 5
ok = (w["present"] and w["leaf_level"] == "pmd" and w["page_size"] == "2M"
      and "huge" in w["steps"][-1]["flags"].split() and w["pfn"] == pfn and
      int(w["phys"], 16) == pfn * 4096 + 0x123)
sys.exit(0 if ok else 1)' "$(section thpwalk | grep '^{')" "${tpfn0:-0}" 2>/dev/null &&
	section thpwalktext | grep -q "pfn=$tpfn0 .* page 2M (huge pmd)"
check $? "want pmd 2M pfn=$((tpfn0 + 5)): $(section thpwalk | head -c 300)"

tr=$(section thprange)
[ "$(grep -c ' -> pfn ' <<<"$tr")" = 1 ] &&
	grep -q "^$taddr-$tend -> pfn $(printf '0x%x-0x%x' "${tpfn0:-0}" $((tpfn0 + 511))) (512 pages; 2M x1)\$" <<<"$tr" &&
	grep -q ': 512 present pages in 1 runs$' <<<"$tr"
check $? "$(tr '\n' ' ' <<<"$tr")"

un=$(section untouched)
grep -q "^pf-walk: $untouched not mapped (pte not present)\$" <<<"$un" &&
	grep -q '^  pte\[.*\[not present: none\]$' <<<"$un" &&
	grep -q '^  pmd\[.*\[present ' <<<"$un"
check $? "$(tail -2 <<<"$un" | tr '\n' ' ')"

# The paged-out page: pagemap's swap type and offset are the generic
# swp_entry_t's, which pf-walk decodes from the x86 swap PTE itself.
python3 -c '
import json, sys
w = json.loads(sys.argv[1])
sw = w["steps"][-1].get("swap", {})
ok = (not w["present"] and w["steps"][-1]["level"] == "pte" and
      int(sys.argv[2]) == 8 and sw.get("kind") == "swap" and
      sw.get("type") == int(sys.argv[3]) and
      sw.get("offset") == int(sys.argv[4], 16) and sw["offset"] > 0)
sys.exit(0 if ok else 1)' "$(section swapwalk | grep '^{')" "$(sfield swapped)" \
	"$(sfield type)" "$(sfield offset)" 2>/dev/null &&
	section swapwalktext | grep -q "^  pte\[.*\[not present: swap entry type $(sfield type) offset $(sfield offset)\( [a-z -]*\)\?\]\$"
check $? "${swp:-no GDBSWAP line}: $(section swapwalktext | grep '^  pte')"

python3 -c '
import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if r["present_pages"] == 0 and r["runs"] == [] and
         r["not_present"] == {"swap": 8} else 1)' "$(section swaprange | grep '^{')" 2>/dev/null &&
	section swaprangetext | grep -q ': 0 present pages in 0 runs; not present: swap x8$'
check $? "$(section swaprange | head -c 300) $(section swaprangetext | tail -1)"

python3 -c '
import json, sys
w = json.loads(sys.argv[1])
ok = (w["levels"] == 4 and [s["level"] for s in w["steps"]] ==
      ["pgd", "pud", "pmd", "pte"] and "CR4.LA57=0" in w["levels_source"] and
      "__pgtable_l5_enabled=0" in w["levels_source"])
sys.exit(0 if ok else 1)' "$(section walkjson | grep '^{')" 2>/dev/null &&
	section walk | grep -q "^pf-walk $addr pid $pid (h_gdb_map) .* levels 4\$" &&
	section walk | grep -q '^  p4d  *(folded into the pgd)$'
check $? "$(section walk | head -1); $(section walkjson | grep -o '"levels_source": "[^"]*"')"

section counters | python3 -c '
import json, sys
c = json.loads(sys.stdin.read())["counters"]
sys.exit(0 if c.get("anon_fault_locked", 0) > 0 else 1)' 2>/dev/null
check $? "$(section counters | head -c 200)"

rss=$(section rss)
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
pids = [t["pid"] for t in r["threads"]]
sys.exit(0 if r["pid"] == int(sys.argv[2]) and int(sys.argv[2]) in pids
         and len(pids) == int(sys.argv[3]) else 1)' "$rss" "$pid" "$nthreads" 2>/dev/null
check $? "$(head -c 200 <<<"$rss")"
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if r["split_counters"]["anonpages"] >= int(sys.argv[2]) else 1)' \
	"$rss" "$touched" 2>/dev/null
check $? "$(head -c 200 <<<"$rss")"

un=$(section unmapped | grep '^pf-walk:')
[ "$(grep -c . <<<"$un")" = 1 ] && grep -q 'not mapped' <<<"$un" &&
	! section unmapped | grep -q Traceback
check $? "$(section unmapped | tail -1)"

bad=$(section badpid)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q 'no task with pid 99999' <<<"$bad"
check $? "$(head -1 <<<"$bad")"

[ -n "$mmline" ] && [ -s "$out/gdbmm-maps" ] && tr -d '\r' <"$log" | grep -q '^GDBMM end'
check $? "${mmline:-no GDBMM line in $log}"

# pf-mm against the guest's /proc/PID/maps, [vsyscall] (the gate VMA) too.
mmjson=$(section mmjson)
awk '{ split($1, a, "-");
	printf "0x%s 0x%s %s\n", a[1], a[2], $2 }' | sed 's/0x0*\([0-9a-f]\)/0x\1/g' \
	>"$out/gdbmm-want"
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
for v in r["vmas"]:
    print(v["start"], v["end"], v["perms"])' "$mmjson" >"$out/gdbmm-got" 2>/dev/null
[ -s "$out/gdbmm-want" ] && diff -u "$out/gdbmm-want" "$out/gdbmm-got" >"$out/gdbmm-diff"
check $? "$(wc -l <"$out/gdbmm-want") maps lines, $(wc -l <"$out/gdbmm-got") from pf-mm; see $out/gdbmm-diff"

want_mm=$(sed -n 's/.* rss_mm=\([-0-9]*\).*/\1/p' <<<"$mmline")
want_split=$(sed -n 's/.* rss_split=\([-0-9]*\).*/\1/p' <<<"$mmline")
got=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1])["rss"]
print(r["rss_mm"], r["rss_split"])' "$mmjson" 2>/dev/null)
[ -n "$want_mm" ] && [ "$got" = "$want_mm $want_split" ]
check $? "guest rss_mm=$want_mm rss_split=$want_split, pf-mm: ${got:-none}"

want_threads=$(sed -n 's/.* threads=\([0-9]*\).*/\1/p' <<<"$mmline")
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
pids = [t["pid"] for t in r["threads"]]
ok = (r["pid"] == int(sys.argv[2]) and int(sys.argv[2]) in pids and
      len(pids) == int(sys.argv[3]) == r["mm_users"] and
      r["map_count"] == len([v for v in r["vmas"] if v["kind"] != "gate"])
      and r["mmap_lock"]["state"] and
      r["pgtables_bytes"] > 0)
sys.exit(0 if ok else 1)' "$mmjson" "$mmpid" "$want_threads" 2>/dev/null
check $? "$(head -c 300 <<<"$mmjson")"

mmtab=$(section mm)
n=$(grep -cE '^ *[0-9a-f]+-[0-9a-f]+ +[r-][w-][x-][ps] ' <<<"$mmtab")
[ "$n" = "$(wc -l <"$out/gdbmm-got")" ] && grep -q '^mmap_lock ' <<<"$mmtab" &&
	grep -q "^pid $mmpid (h_gdb_mm)" <<<"$mmtab"
check $? "$n VMA rows; $(head -1 <<<"$mmtab")"

bad=$(section mmbadpid)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q '^pf-mm: no task with pid 99999$' <<<"$bad"
check $? "$(head -1 <<<"$bad")"

bad=$(section mmkthread)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q '^pf-mm: pid 2 (.*) is a kernel thread' <<<"$bad"
check $? "$(head -1 <<<"$bad")"

! grep -q Traceback "$gout" && grep -q '^@@end' "$gout"
check $? "see $gout"

# --- pf-race-watch on the atomic path ----------------------------------
log=$out/gdb-race-console.log
rout=$out/gdb-race.out
rm -f "$log" "$rout"
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r gdbrace -g -p "$port" \
	-a pfscale.atomic_pte=1 -l "$log" -t 600 >"$out/gdb-race-boot.out" 2>&1 &
qpid=$!
# The four helpers start side by side and print in any order: wait for each.
for mode in same populate swap reclaim; do
	wait_console "$log" "^RACE .* mode=$mode\$" 120 "$qpid" >/dev/null
done
races=$(complete_lines "$log" | grep '^RACE pid=')
# region MODE: "PID START END" of that helper
region() { sed -n "s/^RACE pid=\([0-9]*\) region=\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) .* mode=$1\$/\1 \2 \3/p" <<<"$races"; }
if [ -z "$(region same)" ] || [ -z "$(region populate)" ] || [ -z "$(region swap)" ] ||
	[ -z "$(region reclaim)" ]; then
	notok "RACE lines in $log within 120 s: $(tr '\n' ' ' <<<"$races")"
	for i in 1 2 3 4 5 6 7 8; do notok "no race helpers"; done
	cleanup
else
	ok
	sed 's/^/# guest: /' <<<"$races"
	sleep 2	# let the rounds start
	timeout 400 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
		-ex "source $art/vmlinux-gdb.py" \
		-ex "source $top/gdb-scripts/pfscale.py" \
		-ex "target remote :$port" \
		-ex 'echo @@before\n' -ex 'pf-counters --json' \
		-ex 'echo @@watch\n' -ex 'pf-race-watch --count 3 --json' \
		-ex 'echo @@step\n' -ex 'stepi' \
		-ex 'echo @@swap\n' -ex 'pf-race-watch --counter swapin_lost --count 1 --json' \
		-ex 'echo @@populate\n' \
		-ex 'pf-race-watch --counter pte_table_cmpxchg_lost --hw --count 1 --json' \
		-ex 'echo @@busy\n' -ex 'pf-race-watch --counter busy_pte_fault --count 1 --json' \
		-ex 'echo @@errors\n' -ex 'pf-race-watch --hw' -ex 'pf-race-watch --counter nosuch_lost' \
		-ex 'echo @@after\n' -ex 'pf-counters --json' \
		-ex 'echo @@bps\n' -ex 'maint info breakpoints' \
		-ex 'echo @@end\n' >"$rout" 2>&1
	cleanup
	gout=$rout
	watch=$(section watch | grep '^{')
	python3 -c '
import json, sys
ls = [json.loads(l) for l in sys.argv[1].splitlines()]
sys.exit(0 if len(ls) == 3 and all(l["counter"].endswith("_lost")
                                   for l in ls) else 1)' "$watch" 2>/dev/null
	check $? "$(section watch | head -c 300)"
	# in_region JSON_LINES: every loss in the region of its tgid's helper,
	# with its found entry present
	in_region() {
		python3 -c '
import json, sys
regions = {}
for l in sys.argv[2].splitlines():
    pid, lo, hi = l.split()
    regions[int(pid)] = (int(lo, 16), int(hi, 16))
ls = [json.loads(l) for l in sys.argv[1].splitlines()]
sys.exit(0 if ls and all(
    l["tgid"] in regions and
    regions[l["tgid"]][0] <= int(l["address"], 16) < regions[l["tgid"]][1] and
    l["found_present"] and int(l["found"], 16) & 1 for l in ls) else 1)' \
			"$1" "$(region same; region populate; region swap; region reclaim)" 2>/dev/null
	}
	in_region "$watch"
	check $? "$(head -c 400 <<<"$watch")"
	# one_loss SECTION COUNTER PYEXPR MODE...: the section holds one JSON
	# report, of COUNTER, by a task of one of the MODE helpers, inside
	# that helper's region, for which PYEXPR (on l) holds.
	one_loss() {
		local sec=$1 counter=$2 expr=$3 mode
		shift 3
		python3 -c '
import json, sys
ls = [json.loads(x) for x in sys.argv[1].splitlines()]
regions = {}
for r in sys.argv[4].splitlines():
    pid, lo, hi = r.split()
    regions[int(pid)] = (int(lo, 16), int(hi, 16))
sys.exit(0 if len(ls) == 1 and all(
    l["counter"] == sys.argv[2] and l["tgid"] in regions and
    regions[l["tgid"]][0] <= int(l["address"], 16) < regions[l["tgid"]][1]
    and eval("(" + sys.argv[3] + ")") for l in ls) else 1)' \
			"$(section "$sec" | grep '^{')" "$counter" "$expr" \
			"$(for mode in "$@"; do region "$mode"; done)" 2>/dev/null
	}
	# A swap-in loss (the swap helper's, or the reclaim helper's, whose
	# writers also swap in): it expected its swap PTE and found the
	# winner's present page.
	one_loss swap swapin_lost 'l["expected_flags"].startswith(
    "not present: swap entry type ") and l["found_present"] and
    l.get("found_level", "pte") == "pte"' swap reclaim
	check $? "$(section swap | head -c 400)"
	one_loss populate pte_table_cmpxchg_lost 'l["found_level"] == "pmd" and
    int(l["expected"], 16) == 0 and l["found_present"] and
    not int(l["found"], 16) & 0x80 and l["source"] != "cr2"' populate &&
		section populate | grep -q '^pf-race-watch: 1 hardware breakpoints on 1 lost-race counters'
	check $? "$(section populate | head -c 400)"
	# A fault that found a PTE parked by reclaim (try_to_unmap_one or
	# MADV_PAGEOUT's young-bit clearing): orig_pte is the busy marker.
	one_loss busy busy_pte_fault \
		'l["expected_flags"] == "not present: pte marker pfscale-busy"' reclaim
	check $? "$(section busy | head -c 400)"
	errs=$(section errors)
	[ "$(grep -c '^pf-race-watch: --hw: [0-9]* sites, but x86 has 4 debug registers' <<<"$errs")" = 1 ] &&
		[ "$(grep -c "^pf-race-watch: 'nosuch_lost' is not a lost-race counter" <<<"$errs")" = 1 ] &&
		[ "$(wc -l <<<"$errs")" = 2 ]
	check $? "$(head -c 300 <<<"$errs")"
	python3 -c '
import json, sys
b = json.loads(sys.argv[1])["counters"]
a = json.loads(sys.argv[2])["counters"]
d = sum(a[n] - b[n] for n in a if n.endswith("_lost"))
print(d)
sys.exit(0 if d >= 5 else 1)' "$(section before)" "$(section after)" >"$out/gdb-race-delta" 2>/dev/null
	check $? "lost counters moved by $(cat "$out/gdb-race-delta")"
	! section bps | grep -qE '^-?[0-9]+ +(hw )?breakpoint' && ! grep -q Traceback "$rout" &&
		grep -q '^@@end' "$rout"
	check $? "$(section bps | head -3 | tr '\n' ' ')"
fi

# --- make gdb, non-interactive ----------------------------------------
port=$(free_port "$port")
mout=$out/make-gdb.out
timeout 300 make -s -C "$top" -o kernel-test -o build/initramfs.cpio gdb \
	GDB_ART="$art" GDB_PORT="$port" GDB_LOG="$out/make-gdb-console.log" \
	GDB_BATCH='-batch -ex "echo @@counters\n" -ex "pf-counters --json"' \
	>"$mout" 2>&1
rc=$?
gout=$mout
sleep 1
section counters | grep '^{' | python3 -c '
import json, sys
c = json.loads(sys.stdin.read())["counters"]
sys.exit(0 if c.get("anon_fault_locked", 0) > 0 else 1)' 2>/dev/null &&
	[ $rc = 0 ] && ! grep -q Traceback "$mout" &&
	! pgrep -f -- "-gdb tcp::$port( |\$)" >/dev/null
check $? "rc $rc; $(pgrep -f -- "-gdb tcp::$port( |\$)" >/dev/null && echo 'QEMU still running;') see $mout"

# --- loader errors (no guest) -----------------------------------------
lout=$(timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $top/gdb-scripts/pfscale.py" -ex 'pf-mm 1' 2>&1)
[ "$(grep -c '^pfscale: source the kernel' <<<"$lout")" = 1 ] &&
	! grep -q Traceback <<<"$lout"
check $? "$(head -2 <<<"$lout" | tr '\n' ' ')"

# --- the kernel's special swap types (no guest) -------------------------
# layout.swap_layout() infers them from swap_info[]'s length and symbols;
# the kernel's .config says which are configured (include/linux/swap.h
# allots them from 31 down). The walkers themselves are unit-tested with
# plain python3 (tests/host/decode.py).
sout=$(PFSCALE_CONFIG=$art/.config timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex "source $top/tests/host/gdb_swap_kinds.py" 2>&1)
grep -qx 'SWAPKINDS ok' <<<"$sout" && ! grep -q Traceback <<<"$sout"
check $? "$(grep -m1 -E 'SWAPKINDS|Error|error' <<<"$sout")"

# A kernel without the patches (PFSCALE_STOCK_ART: the unpatched build that
# make test provides); no guest needed, the symbols decide.
stock=${PFSCALE_STOCK_ART:-}
if [ -z "$stock" ] || [ ! -f "$stock/vmlinux" ]; then
	rest skip "PFSCALE_STOCK_ART (an unpatched 6.1 artifact directory) not set"
	exit 0
fi
uout=$(timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$stock/vmlinux" \
	-ex "source $stock/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex "pf-counters" -ex "pf-race-watch --count 1" 2>&1)
[ "$(grep -c 'kernel has no pfscale patches' <<<"$uout")" = 2 ] && ! grep -q Traceback <<<"$uout"
check $? "$(tail -2 <<<"$uout" | tr '\n' ' ')"
exit 0
