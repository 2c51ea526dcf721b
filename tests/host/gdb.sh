#!/bin/bash
# Host-side test of the pfscale gdb helpers (gdb-scripts/pfscale.py): boot
# the guest with a gdbstub, let tests/guest/h_gdb_map map a known region and
# a 2 MiB THP region and tests/guest/h_gdb_mm print its /proc/self/maps and
# RSS, attach gdb and check pf-walk (4K and huge pmd, the paging levels),
# pf-range, pf-counters, pf-rss and pf-mm against what the guest saw, and
# pf-mm on a maple tree made wrong in guest memory and restored; boot again with pfscale.atomic_pte=1 and tests/guest/h_race_loop
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
host_test_env
log=$out/gdb-console.log
gout=$out/gdb.out
pages=64 touched=48

# kselftest style: the plan is the number of check lines in this file (each
# check is one "check NAME STATUS [DETAIL]" line, where it is made); a run
# that stops early reports fewer results than its plan, which fails it.
plan=$(grep -cE '^[[:space:]]*check "' "$0")
echo "1..$plan"
# check NAME STATUS [DETAIL]: STATUS 0 passes, "skip" skips (DETAIL: why),
# anything else fails with DETAIL.
check() {
	case $2 in
	0) echo "ok - gdb: $1" ;;
	skip) echo "ok - gdb: $1 # SKIP $3" ;;
	*) echo "not ok - gdb: $1${3:+ ($3)}" ;;
	esac
}
# checks ARG...: tests/host/gdb_checks.py (the JSON checks); its output is
# the failure's detail.
checks() { python3 "$top/tests/host/gdb_checks.py" "$@"; }

if ! command -v gdb >/dev/null || [ ! -f "$art/vmlinux" ] || [ ! -f "$art/vmlinux-gdb.py" ]; then
	echo "# no gdb, or no vmlinux/vmlinux-gdb.py in $art: no check can run"
	exit 1
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
[ -n "$line" ]
check "helper printed its GDBMAP line" $? "none in $log within 120 s"
[ -n "$line" ] || exit 0
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
	-ex "source $top/tests/host/gdb_maple_corrupt.py" \
	-ex 'echo @@pivot\n' -ex "pf-test-corrupt pivot $mmpid" -ex "pf-mm $mmpid" \
	-ex 'echo @@pivotjson\n' -ex "pf-mm $mmpid --json" \
	-ex 'echo @@pivotrestore\n' -ex 'pf-test-corrupt restore' \
	-ex 'echo @@vmstart\n' -ex "pf-test-corrupt vmstart $mmpid" -ex "pf-mm $mmpid" \
	-ex 'echo @@vmstartjson\n' -ex "pf-mm $mmpid --json" \
	-ex 'echo @@restore\n' -ex 'pf-test-corrupt restore' -ex "pf-mm $mmpid" \
	-ex 'echo @@restorejson\n' -ex "pf-mm $mmpid --json" \
	-ex 'echo @@end\n' >"$gout" 2>&1
cleanup
section() { awk -v s="@@$1" '/^@@/ { on = ($0 == s); next } on' "$gout"; }

section walk | grep -q "pfn=$pfn0 "
check "pf-walk PFN of page 0 equals pagemap's" $? "want pfn=$pfn0: $(section walk | tail -1)"

section range | grep -q ": $touched present pages in "
check "pf-range finds exactly $touched present pages" $? "$(section range | tail -1)"

[ "$(tfield anonhuge_kb)" = 2048 ] && [ -n "$tpfn0" ] &&
	[ "$tpfn5" = $((tpfn0 + 5)) ]
check "helper's THP region is one huge pmd (AnonHugePages 2048 kB)" $? "${thp:-no GDBTHP line}"

why=$(checks thp_walk "$(section thpwalk | grep '^{')" "${tpfn0:-0}") &&
	section thpwalktext | grep -q "pfn=$tpfn0 .* page 2M (huge pmd)"
check "pf-walk in the THP region: 2M huge pmd, PFN = pagemap's pfn0 + 5" $? "$why $(section thpwalk | head -c 300)"

tr=$(section thprange)
[ "$(grep -c ' -> pfn ' <<<"$tr")" = 1 ] &&
	grep -q "^$taddr-$tend -> pfn $(printf '0x%x-0x%x' "${tpfn0:-0}" $((tpfn0 + 511))) (512 pages; 2M x1)\$" <<<"$tr" &&
	grep -q ': 512 present pages in 1 runs$' <<<"$tr"
check "pf-range over the THP region: one present run of 512 pages, 2M x1" $? "$(tr '\n' ' ' <<<"$tr")"

un=$(section untouched)
grep -q "^pf-walk: $untouched not mapped (pte not present)\$" <<<"$un" &&
	grep -q '^  pte\[.*\[not present: none\]$' <<<"$un" &&
	grep -q '^  pmd\[.*\[present ' <<<"$un"
check "pf-walk on a never-touched page of the region: pte not present (none)" $? "$(tail -2 <<<"$un" | tr '\n' ' ')"

# The paged-out page: pagemap's swap type and offset are the generic
# swp_entry_t's, which pf-walk decodes from the x86 swap PTE itself.
why=$(checks swap_walk "$(section swapwalk | grep '^{')" "$(sfield swapped)" \
	"$(sfield type)" "$(sfield offset)") &&
	section swapwalktext | grep -q "^  pte\[.*\[not present: swap entry type $(sfield type) offset $(sfield offset)\( [a-z -]*\)\?\]\$"
check "pf-walk on a paged-out page: a swap entry, type and offset equal pagemap's" $? "${swp:-no GDBSWAP line}: $why $(section swapwalktext | grep '^  pte')"

why=$(checks swap_range "$(section swaprange | grep '^{')") &&
	section swaprangetext | grep -q ': 0 present pages in 0 runs; not present: swap x8$'
check "pf-range over the 8 paged-out pages: none present, 8 swap entries counted" $? "$why $(section swaprangetext | tail -1)"

why=$(checks four_levels "$(section walkjson | grep '^{')") &&
	section walk | grep -q "^pf-walk $addr pid $pid (h_gdb_map) .* levels 4\$" &&
	section walk | grep -q '^  p4d  *(folded into the pgd)$'
check "pf-walk detects 4-level paging (levels 4, p4d folded, CR4.LA57=0, __pgtable_l5_enabled=0)" $? "$why; $(section walk | head -1)"

why=$(checks counters_counted "$(section counters | grep '^{')")
check "pf-counters --json has anon_fault_locked > 0" $? "$why"

rss=$(section rss | grep '^{')
why=$(checks rss_threads "$rss" "$pid" "$nthreads")
check "pf-rss --json lists the pid and its threads" $? "$why"
why=$(checks rss_split_anon "$rss" "$touched")
check "pf-rss split anon pages >= $touched" $? "$why"

un=$(section unmapped | grep '^pf-walk:')
[ "$(grep -c . <<<"$un")" = 1 ] && grep -q 'not mapped' <<<"$un" &&
	! section unmapped | grep -q Traceback
check "pf-walk on an unmapped address: one line, no traceback" $? "$(section unmapped | tail -1)"

bad=$(section badpid)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q 'no task with pid 99999' <<<"$bad"
check "pf-rss on pid 99999: one clear line" $? "$(head -1 <<<"$bad")"

[ -n "$mmline" ] && [ -s "$out/gdbmm-maps" ] && tr -d '\r' <"$log" | grep -q '^GDBMM end'
check "h_gdb_mm printed its maps and RSS" $? "${mmline:-no GDBMM line in $log}"

# pf-mm against the guest's /proc/PID/maps, [vsyscall] (the gate VMA) too.
mmjson=$(section mmjson)
awk '{ split($1, a, "-");
	printf "0x%s 0x%s %s\n", a[1], a[2], $2 }' "$out/gdbmm-maps" | sed 's/0x0*\([0-9a-f]\)/0x\1/g' \
	>"$out/gdbmm-want"
checks mm_vmas "$mmjson" >"$out/gdbmm-got"
[ -s "$out/gdbmm-want" ] && diff -u "$out/gdbmm-want" "$out/gdbmm-got" >"$out/gdbmm-diff"
check "pf-mm VMAs (start, end, perms) equal the guest's /proc/PID/maps" $? "$(wc -l <"$out/gdbmm-want") maps lines, $(wc -l <"$out/gdbmm-got") from pf-mm; see $out/gdbmm-diff"

want_mm=$(sed -n 's/.* rss_mm=\([-0-9]*\).*/\1/p' <<<"$mmline")
want_split=$(sed -n 's/.* rss_split=\([-0-9]*\).*/\1/p' <<<"$mmline")
why=$(checks mm_rss "$mmjson" "${want_mm:-none}" "${want_split:-none}")
check "pf-mm rss_mm and rss_split equal the guest's statm and debugfs rss" $? "$why"

want_threads=$(sed -n 's/.* threads=\([0-9]*\).*/\1/p' <<<"$mmline")
why=$(checks mm_threads "$mmjson" "$mmpid" "${want_threads:-none}")
check "pf-mm lists the threads, map_count equals the VMA count" $? "$why"

mmtab=$(section mm)
n=$(grep -cE '^ *[0-9a-f]+-[0-9a-f]+ +[r-][w-][x-][ps] ' <<<"$mmtab")
[ "$n" = "$(wc -l <"$out/gdbmm-got")" ] && grep -q '^mmap_lock ' <<<"$mmtab" &&
	grep -q "^pid $mmpid (h_gdb_mm)" <<<"$mmtab"
check "pf-mm table shows every VMA and the mmap_lock" $? "$n VMA rows; $(head -1 <<<"$mmtab")"

bad=$(section mmbadpid)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q '^pf-mm: no task with pid 99999$' <<<"$bad"
check "pf-mm on pid 99999: one clear line" $? "$(head -1 <<<"$bad")"

bad=$(section mmkthread)
[ "$(grep -c . <<<"$bad")" = 1 ] && grep -q '^pf-mm: pid 2 (.*) is a kernel thread' <<<"$bad"
check "pf-mm on a kernel thread: one clear line" $? "$(head -1 <<<"$bad")"

# A tree that is not as it should be, made so in guest memory while every
# vCPU is stopped (tests/host/gdb_maple_corrupt.py; the guest never runs
# between a write and its restore): pf-mm carries on, lists what it could
# read, says each walk problem in one line, marks a VMA whose tree range is
# not its vm_start/vm_end "!!", and counts both in its summary and in
# --json's "inconsistencies", as crash's pfvma does.
why=$(checks mm_inconsistent "$mmjson" "$(section pivot)" "$(section pivotjson)" \
	"pivot@1 below the one before" 0)
check "pf-mm on a tree whose root pivot[1] is written below pivot[0]: lists VMAs, 1 inconsistency, one problem line (text and --json)" $? \
	"$why; $(section pivot | grep -E '^CORRUPT|^pf-mm:|VMA\(s\)' | head -4 | tr '\n' ' ')"
why=$(checks mm_inconsistent "$mmjson" "$(section vmstart)" "$(section vmstartjson)" "" 1)
check "pf-mm on a tree whose VMA's vm_start is one page off: every VMA listed, that one marked !!, 1 inconsistency (text and --json)" $? \
	"$why; $(section vmstart | grep -E '^CORRUPT|^pf-mm:|VMA\(s\)|!!' | head -4 | tr '\n' ' ')"
why=$(checks mm_restored "$mmjson" "$(section restore)" "$(section restorejson)")
check "pf-mm after the words are restored: 0 inconsistencies, the VMAs as before" $? \
	"$why; $(section restore | grep -E '^CORRUPT|^pf-mm:|VMA\(s\)' | head -3 | tr '\n' ' ')"

! grep -qE 'Traceback|internal error' "$gout" && grep -q '^@@end' "$gout"
check "no Python traceback or internal error in the gdb output" $? "see $gout"

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
[ -n "$(region same)" ] && [ -n "$(region populate)" ] && [ -n "$(region swap)" ] &&
	[ -n "$(region reclaim)" ]
check "h_race_loop same, populate, swap and reclaim printed their regions (pfscale.atomic_pte=1)" $? \
	"RACE lines in $log within 120 s: $(tr '\n' ' ' <<<"$races")"
if [ -z "$(region same)" ] || [ -z "$(region populate)" ] || [ -z "$(region swap)" ] ||
	[ -z "$(region reclaim)" ]; then
	exit 0	# fewer results than the plan: a failure
fi
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
	-ex 'echo @@backout\n' -ex 'pf-race-watch --counter anon_cmpxchg_backout --count 1 --json' \
	-ex 'echo @@errors\n' -ex 'pf-race-watch --hw' -ex 'pf-race-watch --counter nosuch_lost' \
	-ex 'echo @@after\n' -ex 'pf-counters --json' \
	-ex 'echo @@bps\n' -ex 'maint info breakpoints' \
	-ex 'echo @@end\n' >"$rout" 2>&1
cleanup
gout=$rout
watch=$(section watch | grep '^{')
all_regions=$(region same; region populate; region swap; region reclaim)
why=$(checks three_losses "$watch" "$(section before | grep '^{')")
check "pf-race-watch --count 3 reports 3 losses of counters of kind lost" $? "$why"
why=$(checks losses_in_regions "$watch" "$all_regions" "$(region swap; region reclaim)")
check "every loss is in its task's helper region, its found PTE present (where pages are paged out: present or a swap entry)" $? "$why"
# A swap-in loss (the swap helper's, or the reclaim helper's, whose
# writers also swap in): it expected its swap PTE and found the winner's
# present page.
why=$(checks swapin_loss "$(section swap | grep '^{')" "$(region swap; region reclaim)")
check "pf-race-watch --counter swapin_lost: a loss in the swap (or reclaim) helper's region, expected a swap entry, found it present" $? "$why"
why=$(checks populate_loss "$(section populate | grep '^{')" "$(region populate)") &&
	section populate | grep -q '^pf-race-watch: 1 hardware breakpoints on 1 lost-race counters'
check "pf-race-watch --counter pte_table_cmpxchg_lost --hw: a loss in the populate helper's region, found the winner's pmd (a present table)" $? "$why $(section populate | head -c 200)"
# A fault that found a PTE parked by reclaim (try_to_unmap_one or
# MADV_PAGEOUT's young-bit clearing): orig_pte is the busy marker.
why=$(checks busy_loss "$(section busy | grep '^{')" "$(region reclaim)")
check "pf-race-watch --counter busy_pte_fault: a fault in the reclaim helper's region expected a pfscale-busy PTE marker" $? "$why"
# A loser of the cmpxchg itself (kind detail, named): it expected an empty
# PTE and found the winner's page.
why=$(checks backout_loss "$(section backout | grep '^{')" "$all_regions")
check "pf-race-watch --counter anon_cmpxchg_backout: a loser in a helper's region expected an empty PTE, found the winner's present" $? "$why"
errs=$(section errors)
[ "$(grep -c '^pf-race-watch: --hw: [0-9]* sites, but x86 has 4 debug registers' <<<"$errs")" = 1 ] &&
	[ "$(grep -c "^pf-race-watch: 'nosuch_lost' is not a lost-race counter" <<<"$errs")" = 1 ] &&
	[ "$(wc -l <<<"$errs")" = 2 ]
check "pf-race-watch --hw on too many sites, an unknown --counter: one line each" $? "$(head -c 300 <<<"$errs")"
why=$(checks lost_moved "$(section before | grep '^{')" "$(section after | grep '^{')" 5)
check "the lost-race counters moved by >= 5 across the watches" $? "$why"
! section bps | grep -qE '^-?[0-9]+ +(hw )?breakpoint' && ! grep -qE 'Traceback|internal error' "$rout" &&
	grep -q '^@@end' "$rout"
check "pf-race-watch leaves no breakpoint behind, no traceback" $? "$(section bps | head -3 | tr '\n' ' ')"

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
why=$(checks counters_counted "$(section counters | grep '^{')") &&
	[ $rc = 0 ] && ! grep -q Traceback "$mout" &&
	! pgrep -f -- "-gdb tcp::$port( |\$)" >/dev/null
check "make gdb GDB_BATCH=...: boots, attaches, runs pf-counters, ends the guest" $? "$why rc $rc; $(pgrep -f -- "-gdb tcp::$port( |\$)" >/dev/null && echo 'QEMU still running;') see $mout"

# --- loader errors (no guest) -----------------------------------------
lout=$(timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $top/gdb-scripts/pfscale.py" -ex 'pf-mm 1' 2>&1)
[ "$(grep -c '^pfscale: source the kernel' <<<"$lout")" = 1 ] &&
	! grep -q Traceback <<<"$lout"
check "scripts loaded without vmlinux-gdb.py: one line, no traceback" $? "$(head -2 <<<"$lout" | tr '\n' ' ')"

# --- the kernel's special swap types (no guest) -------------------------
# layout.defines() has them from the kernel's pfscale-layout;
# the kernel's .config says which are configured (include/linux/swap.h
# allots them from 31 down). The walkers themselves are unit-tested with
# plain python3 (tests/host/decode.py).
sout=$(PFSCALE_CONFIG=$art/.config timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex "source $top/tests/host/gdb_swap_kinds.py" 2>&1)
grep -qx 'SWAPKINDS ok' <<<"$sout" && ! grep -q Traceback <<<"$sout"
check "the special swap types from the kernel's pfscale-layout equal those its .config allots" $? \
	"$(grep -m1 -E 'SWAPKINDS|Error|error' <<<"$sout")"

# Without the kernel's pfscale-layout the commands that decode say where
# it should be and how to make it, in one line.
nout=$(PFSCALE_LAYOUT=$out/no-such-pfscale-layout timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex 'pf-walk 0x1000 1' 2>&1)
[ "$(grep -c "^pf-walk: cannot read $out/no-such-pfscale-layout (.*): make it with scripts/layout.sh KERNEL_BUILD_DIR" <<<"$nout")" = 1 ] &&
	! grep -q Traceback <<<"$nout"
check "without pfscale-layout: one line naming the file and scripts/layout.sh" $? "$(tr '\n' ' ' <<<"$nout" | head -c 300)"
# Another build's pfscale-layout (its "# build-id" line not vmlinux's) is
# refused.
vmid=$(readelf -n "$art/vmlinux" | sed -n 's/^[[:space:]]*Build ID: //p' | head -n 1)
sed '/^# build-id /d; 1a # build-id 0123456789abcdef0123456789abcdef01234567' \
	"$art/pfscale-layout" > "$out/otherbuild-pfscale-layout"
bout=$(PFSCALE_LAYOUT=$out/otherbuild-pfscale-layout timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex 'pf-walk 0x1000 1' 2>&1)
[ "$(grep -c "^pf-walk: $out/otherbuild-pfscale-layout is not this vmlinux's: build-id 0123456789abcdef0123456789abcdef01234567, vmlinux has $vmid$" <<<"$bout")" = 1 ] &&
	! grep -q Traceback <<<"$bout"
check "another build's pfscale-layout is refused in one line (its build-id against vmlinux's)" $? "$(tr '\n' ' ' <<<"$bout" | head -c 300)"
# Another kernel's pfscale-layout without a build-id line (hwpoison's swap
# type toggled, so one swap file more or less) is refused: swap_info[] has
# MAX_SWAPFILES entries.
maxswap=$(sed -n 's/^MAX_SWAPFILES //p' "$art/pfscale-layout")
if grep -qx 'SWP_HWPOISON_NUM 1' "$art/pfscale-layout"; then
	othermax=$((maxswap + 1)) otherhw=0
else
	othermax=$((maxswap - 1)) otherhw=1
fi
sed "/^# build-id /d; s/^MAX_SWAPFILES .*/MAX_SWAPFILES $othermax/; s/^SWP_HWPOISON_NUM .*/SWP_HWPOISON_NUM $otherhw/" \
	"$art/pfscale-layout" > "$out/other-pfscale-layout"
mout=$(PFSCALE_LAYOUT=$out/other-pfscale-layout timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex 'pf-walk 0x1000 1' 2>&1)
[ "$(grep -c "^pf-walk: $out/other-pfscale-layout is not this vmlinux's: MAX_SWAPFILES $othermax, swap_info\[\] has $maxswap$" <<<"$mout")" = 1 ] &&
	! grep -q Traceback <<<"$mout"
check "another kernel's pfscale-layout is refused in one line (MAX_SWAPFILES against swap_info[])" $? "$(tr '\n' ' ' <<<"$mout" | head -c 300)"

# --- errors and caches of the scripts themselves (no guest) ------------
# tests/host/gdb_selftest.py: a user error is one line, a script bug an
# "internal error" line (a traceback with print-stack full), and the
# layout cache is emptied when gdb loads a new objfile.
tout=$(timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex "source $top/tests/host/gdb_selftest.py" \
	-ex 'echo @@user\n' -ex 'pf-selftest-user' \
	-ex 'echo @@bug\n' -ex 'pf-selftest-bug' \
	-ex 'echo @@bugfull\n' -ex 'set python print-stack full' -ex 'pf-selftest-bug' \
	-ex 'echo @@cache\n' -ex "pf-selftest-cache $art/vmlinux" -ex 'echo @@end\n' 2>&1)
gout=/dev/stdin
[ "$(section user <<<"$tout")" = "pf-selftest-user: no task with pid 1" ] &&
	[ "$(section bug <<<"$tout")" = "pf-selftest-bug: internal error (a bug in gdb-scripts/pfscale_gdb): KeyError: 'no-such-key'; 'set python print-stack full' shows the traceback" ] &&
	section bugfull <<<"$tout" | grep -q '^Traceback' && section bugfull <<<"$tout" | grep -q "^KeyError: 'no-such-key'"
check "a user error is one line; a script bug is an internal error, with a traceback under print-stack full" $? \
	"$(tr '\n' ' ' <<<"$tout" | head -c 400)"
[ "$(section cache <<<"$tout")" = "CACHE filled, then emptied by a new objfile" ]
check "the layout cache is emptied when gdb loads a new objfile" $? "$(section cache <<<"$tout")"

# A kernel without the patches (PFSCALE_STOCK_ART: the unpatched build that
# make test provides); no guest needed, the symbols decide.
stock=${PFSCALE_STOCK_ART:-}
if [ -z "$stock" ] || [ ! -f "$stock/vmlinux" ]; then
	st=skip why="PFSCALE_STOCK_ART (an unpatched 6.1 artifact directory) not set"
else
	uout=$(timeout 60 gdb -batch -nx -iex 'set auto-load python-scripts off' "$stock/vmlinux" \
		-ex "source $stock/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
		-ex "pf-counters" -ex "pf-race-watch --count 1" 2>&1)
	[ "$(grep -c 'kernel has no pfscale patches' <<<"$uout")" = 2 ] && ! grep -q Traceback <<<"$uout"
	st=$? why="$(tail -2 <<<"$uout" | tr '\n' ' ')"
fi
check "on an unpatched kernel: pf-counters and pf-race-watch say so in one line" "$st" "$why"
exit 0
