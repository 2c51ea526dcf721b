#!/bin/bash
# Host-side test (the post-mortem test): dump a live guest's memory from the
# QEMU monitor in three formats and check that the readers get the same
# pfscale figures out of them as the guest printed just before the dump:
#   plain ELF            crash + crash/pfscale.so (every command)
#   kdump-compressed -z  crash + pfscale.so (pfcounters)
#   paging ELF -p        gdb + vmlinux-gdb.py + gdb-scripts/pfscale.py (pf-counters)
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/crash.sh
#
# Prints TAP-style "ok - crash: ..." / "not ok - crash: ..." lines.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
log=$out/crash-console.log sock=$out/crash-monitor.sock core=$out/vmcore
corez=$out/vmcore.kdump corep=$out/vmcore.paging
so=$out/pfscale.so cmds=$out/crash-cmds crashout=$out/crash-output.txt

failed=0
ok() { echo "ok - crash: $1"; }
notok() { echo "not ok - crash: $1"; failed=1; }
skip() { echo "ok - crash: $1 # SKIP $2"; }

if ! command -v crash >/dev/null || [ ! -f /usr/include/crash/defs.h ]; then
	echo "1..1"
	skip "extension reads the vmcore" "crash or /usr/include/crash/defs.h missing"
	exit 0
fi
# The checks below, in order (an early exit after a failure reports fewer).
echo "1..27"
if make -s -C "$top" build/pfscale.so >"$out/crash-gcc.log" 2>&1 && cp "$top/build/pfscale.so" "$so"; then
	ok "extension crash/pfscale.c builds"
else
	notok "extension crash/pfscale.c builds: $(head -3 "$out/crash-gcc.log")"
	exit 0
fi

# monitor CMD...: send HMP commands, wait for each one's prompt.
monitor() { python3 "$top/crash/hmp.py" "$sock" "$@"; }

rm -f "$core" "$corez" "$corep" "$sock" "$log"	# a stale READY must not be taken for this boot's
# crashmaps parks h_crash_maps (pfvma's figure) before crashfig starts.
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r crashmaps,crashfig -M "$sock" \
	-m 512 -l "$log" -t 600 &
qpid=$!
# End QEMU: "quit" on the monitor; failing that, TERM boot.sh's `timeout`
# (its own process group, so killing boot.sh alone would leave QEMU up).
cleanup() {
	local child
	[ -S "$sock" ] && monitor quit >/dev/null 2>&1
	for _ in $(seq 20); do
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$qpid" 2>/dev/null; then
		for child in $(pgrep -P "$qpid"); do kill "$child" 2>/dev/null; done
		kill "$qpid" 2>/dev/null
	fi
	wait "$qpid" 2>/dev/null
}
trap cleanup EXIT

mready=$(wait_console "$log" '^CRASHMAPS READY pid=[0-9]+$' 300 "$qpid")
mpid=${mready#CRASHMAPS READY pid=}
ready=$(wait_console "$log" '^CRASHFIG READY pid=[0-9]+$' 300 "$qpid")
ready=${ready#CRASHFIG READY pid=}
if [ -z "$ready" ]; then
	notok "guest helper h_crash_fig printed READY within 300 s (see $log)"
	exit 0
fi
ok "guest helper h_crash_fig is ready (pid $ready)"
pid=$ready
if [ -n "$mpid" ]; then
	ok "guest helper h_crash_maps is parked (pid $mpid)"
else
	notok "guest helper h_crash_maps printed READY (see $log)"
fi

# dump-guest-memory without -d is synchronous: the prompt returns when done.
# The same stopped guest in three formats: plain ELF (crash), kdump-compressed
# with zlib (-z, crash), ELF with virtual addresses from the page tables
# (-p, gdb: on a plain ELF gdb silently reads vmlinux's initial data).
monitor stop "dump-guest-memory $core" "dump-guest-memory -z $corez" \
	"dump-guest-memory -p $corep" "info status" > "$out/crash-monitor.log" 2>&1
if [ -s "$core" ] && grep -q paused "$out/crash-monitor.log"; then
	sizes="$(du -m "$core" | cut -f1) MB ELF, $(du -m "$corez" 2>/dev/null | cut -f1) MB -z"
	ok "QEMU dumped guest memory to vmcores ($sizes, $(du -m "$corep" 2>/dev/null | cut -f1) MB -p)"
else
	notok "QEMU dumped guest memory (see $out/crash-monitor.log)"
	exit 0
fi
cleanup
trap - EXIT

cat > "$cmds" <<EOC
extend $so
pfcounters
pfrss $pid
pfps
pfrss 999999
pfvma 999999
pfpte $pid 0 800000000000
pfvma ${mpid:-1}
help pfcounters pfps pfrss pfpte pfvma
pfrss 999998
pf-counters
pf-range 0 800000000000 $pid --json
quit
EOC
timeout 300 crash -s "$art/vmlinux" "$core" -i "$cmds" > "$crashout" 2>&1 </dev/null
echo "# crash output in $crashout"

guest=$(tr -d '\r' < "$log" | grep '^CRASHFIG ')
# The counters: same names, same values (the helper is parked: none move).
g_cnt=$(echo "$guest" | sed -n 's/^CRASHFIG counter //p' | sort)
# crash does not echo the commands: pfcounters's lines are those between
# the extension's "loaded" line and pfrss's first line ("pid N").
c_cnt=$(sed -n '/pfscale.so: shared object loaded/,/^pid /p' "$crashout" |
	grep -E '^[a-z_0-9]+ [0-9]+$' | grep -v '^pid ' | sort)
if [ -n "$g_cnt" ] && [ "$(echo "$g_cnt" | cut -d' ' -f1)" = "$(echo "$c_cnt" | cut -d' ' -f1)" ]; then
	ok "pfcounters lists the same $(echo "$g_cnt" | wc -l) counter names as debugfs"
else
	notok "pfcounters lists the same counter names as debugfs (guest: $(echo "$g_cnt" | tr '\n' ' ' | cut -c1-200); crash: $(echo "$c_cnt" | tr '\n' ' ' | cut -c1-200))"
fi
if [ -n "$g_cnt" ] && [ "$g_cnt" = "$c_cnt" ]; then
	ok "pfcounters values equal the guest's debugfs counters"
else
	notok "pfcounters values equal the guest's debugfs counters: $(diff <(echo "$g_cnt") <(echo "$c_cnt") | grep '^[<>]' | tr '\n' ' ')"
fi

# pfrss: per-thread anon deltas and rss_split equal the guest's rss file.
g_thr=$(echo "$guest" | sed -n 's/^CRASHFIG rss thread \([0-9]*\) events [0-9-]* file [0-9-]* anon \([0-9-]*\) .*/\1 \2/p' | sort)
c_rss=$(sed -n "/^pid $pid\$/,/^rss_split /p" "$crashout")
c_thr=$(echo "$c_rss" | sed -n 's/^thread \([0-9]*\) events [0-9-]* filepages [0-9-]* anonpages \([0-9-]*\) .*/\1 \2/p' | sort)
if [ -n "$g_thr" ] && [ "$g_thr" = "$c_thr" ]; then
	ok "pfrss per-thread anon deltas equal the guest's ($(echo "$g_thr" | tr ' \n' ':,' | sed 's/,$//'))"
else
	notok "pfrss per-thread anon deltas equal the guest's (guest: $(echo "$g_thr" | tr '\n' ','); crash: $(echo "$c_thr" | tr '\n' ','))"
fi
# h_crash_fig's workers fault 4 + 3 * i pages each, under the sync threshold.
w_thr=$(echo "$c_thr" | sort -n | awk 'NR > 1 { printf "%s%s", s, $2; s = " " }')
if [ "$w_thr" = "4 7 10 13" ]; then
	ok "pfrss shows each worker's unsynced anon delta as the pages it faulted (4 7 10 13)"
else
	notok "pfrss shows each worker's unsynced anon delta as the pages it faulted (want 4 7 10 13, got '$w_thr')"
fi
for f in rss_split rss_mm; do
	g=$(echo "$guest" | sed -n "s/^CRASHFIG rss $f //p")
	c=$(echo "$c_rss" | sed -n "s/^$f //p")
	if [ -n "$g" ] && [ "$g" = "$c" ]; then
		ok "pfrss $f equals the guest's ($g)"
	else
		notok "pfrss $f equals the guest's (guest '$g', crash '$c')"
	fi
done
if [ "$(grep -c "^pfrss: no task with pid 999999\$" "$crashout")" = 1 ]; then
	ok "pfrss of an unknown pid says so in one line"
else
	notok "pfrss of an unknown pid says so in one line"
fi

# pfpte over all user space: the present pages it finds, against the
# guest's page-table scan (rss_scan counts only pages with a struct page).
g_scan=$(echo "$guest" | sed -n "s/^CRASHFIG rss rss_scan //p")
c_pte=$(sed -n 's/^total \([0-9]*\)$/\1/p' "$crashout" | head -1)
echo "# pfpte total present user pages $c_pte, guest rss_scan $g_scan"
if [ -n "$c_pte" ] && [ -n "$g_scan" ] && [ "$c_pte" -ge "$g_scan" ] && [ "$c_pte" -le $((g_scan + 8)) ]; then
	ok "pfpte finds the guest's rss_scan present pages ($c_pte vs $g_scan)"
else
	notok "pfpte finds the guest's rss_scan present pages (pfpte '$c_pte', rss_scan '$g_scan')"
fi

# pfpte's swap entries: the helper's paged-out pages (nothing else is
# under memory pressure, so no other page of it is swapped).
g_swapped=$(echo "$guest" | sed -n 's/^CRASHFIG swapped //p')
c_swapped=$(sed -n 's/^not_present swap \([0-9]*\)$/\1/p' "$crashout" | head -1)
c_other=$(grep '^not_present ' "$crashout" | grep -vc '^not_present swap ')
if [ -n "$g_swapped" ] && [ "$g_swapped" -gt 0 ] && [ "$c_swapped" = "$g_swapped" ] &&
	[ "$c_other" = 0 ]; then
	ok "pfpte counts the guest's $g_swapped paged-out pages as swap entries, nothing else non-present"
else
	notok "pfpte counts the guest's paged-out pages as swap entries (pfpte swapped '$c_swapped' other '$c_other', guest swapped '$g_swapped')"
fi

# pfps: every thread of the helper, with its tgid and comm.
nthr=$(echo "$g_thr" | grep -c .)
c_ps=$(awk -v p="$pid" '$2 == p && $3 == "h_crash_fig" && $5 ~ /^[0-9a-f]+$/ && $5 != "0"' "$crashout" | wc -l)
if [ "$nthr" -gt 0 ] && [ "$c_ps" = "$nthr" ] && grep -Eq "^ +$pid +$pid +h_crash_fig " "$crashout"; then
	ok "pfps lists pid $pid and its $nthr threads (tgid $pid, comm h_crash_fig)"
else
	notok "pfps lists pid $pid and its $nthr threads (found $c_ps)"
fi
if [ "$(grep -c '^SYNOPSIS' "$crashout")" = 5 ] && grep -q '^  pfrss \[-j\] pid$' "$crashout" &&
	grep -q '^  pfvma \[-j\] pid$' "$crashout"; then
	ok "help shows the five pfscale commands"
else
	notok "help shows the five pfscale commands"
fi

# pfvma: h_crash_maps's VMAs from its maple tree, against its own
# /proc/self/maps printed just before the dump (it has not run since).
g_maps=$(tr -d '\r' < "$log" | sed -n 's/^CRASHMAPS \([0-9a-f]*-[0-9a-f]* \)/\1/p' | grep -v '^READY')
vma_hdr=$(grep -m1 -E "^pid $mpid \(h_crash_maps\) mm [0-9a-f]+: " "$crashout")
c_maps=$(awk -v h="$vma_hdr" '$0 == h { on = 1; getline; next }
	on && !/^[0-9a-f]+-[0-9a-f]+  / { exit } on' "$crashout")
g_spp=$(echo "$g_maps" | awk '{ print $1, $2 }')
c_spp=$(echo "$c_maps" | awk '{ print $1, $2 }')
nmaps=$(echo "$g_maps" | grep -c .)
echo "# pfvma: $vma_hdr"
if [ -n "$mpid" ] && [ "$nmaps" -gt 200 ] && [ "$g_spp" = "$c_spp" ]; then
	ok "pfvma lists the same $nmaps VMAs as /proc/$mpid/maps (start, end, perms)"
else
	notok "pfvma lists the same VMAs as /proc/PID/maps (guest $nmaps, crash $(echo "$c_maps" | grep -c .): $(diff <(echo "$g_spp") <(echo "$c_spp") | grep '^[<>]' | head -6 | tr '\n' ' '))"
fi
# pgoff and the name: maps prints d_path, pfvma the dentry name (shmem's
# "/dev/zero (deleted)" is the dentry "dev/zero"); compare basenames.
g_pn=$(echo "$g_maps" | awk '{ n = ""; for (i = 6; i <= NF; i++) n = n (n == "" ? "" : " ") $i
	sub(/ \(deleted\)$/, "", n); sub(/.*\//, "", n); print $1, $3, n }')
c_pn=$(echo "$c_maps" | awk '{ n = $6; sub(/.*\//, "", n); print $1, $3, n }')
nfile=$(echo "$c_maps" | awk '$4 == "file"' | grep -c .)
if [ -n "$g_pn" ] && [ "$g_pn" = "$c_pn" ] && [ "$nfile" -ge 4 ] &&
	echo "$c_maps" | grep -q ' \[stack\]$' && echo "$c_maps" | grep -q ' rw-s .* file '; then
	ok "pfvma pgoff and names agree with maps ($nfile file VMAs, [stack], rw-s shared)"
else
	notok "pfvma pgoff and names agree with maps: $(diff <(echo "$g_pn") <(echo "$c_pn") | grep '^[<>]' | head -6 | tr '\n' ' ')"
fi
height=$(echo "$vma_hdr" | sed -n 's/.* maple tree height \([0-9]*\), \([0-9]*\) nodes$/\1 \2/p')
if [ -n "$height" ] && [ "${height% *}" -ge 2 ] && [ "${height#* }" -gt 1 ]; then
	ok "pfvma walked internal maple nodes and found no inconsistency (height ${height% *}, ${height#* } nodes)"
else
	notok "pfvma walked internal maple nodes consistently (header: '$vma_hdr')"
fi
if [ "$(grep -c "^pfvma: no task with pid 999999\$" "$crashout")" = 1 ]; then
	ok "pfvma of an unknown pid says so in one line"
else
	notok "pfvma of an unknown pid says so in one line"
fi
# gdb's names: pf-counters and pf-range START END PID --json (after the
# marker line of "pfrss 999998") as pfcounters and pfpte.
aliases=$(sed -n '/^pfrss: no task with pid 999998$/,$p' "$crashout")
a_cnt=$(echo "$aliases" | grep -E '^[a-z_0-9]+ [0-9]+$' | sort)
if [ -n "$c_cnt" ] && [ "$a_cnt" = "$c_cnt" ]; then
	ok "pf-counters (gdb's name) prints what pfcounters does"
else
	notok "pf-counters (gdb's name) prints what pfcounters does: $(diff <(echo "$c_cnt") <(echo "$a_cnt") | grep '^[<>]' | head -4 | tr '\n' ' ')"
fi
a_pte=$(echo "$aliases" | grep '^{' | python3 -c 'import json, sys
r = json.loads(sys.stdin.readline())
print(r["present_pages"], r["pid"], r.get("not_present", {}).get("swap", 0))' 2>&1)
if [ "$a_pte" = "$c_pte $pid ${c_swapped:-0}" ]; then
	ok "pf-range START END PID --json (gdb's name and order) finds pfpte's pages ($a_pte)"
else
	notok "pf-range START END PID --json finds pfpte's pages and swap entries (got '$a_pte', want '$c_pte $pid ${c_swapped:-0}')"
fi
if grep -qE 'pfscale: |no pfscale patches' "$crashout"; then
	notok "no extension error on the patched kernel: $(grep -m1 -E 'pfscale: |no pfscale patches' "$crashout")"
else
	ok "no extension error or 'no pfscale patches' line on the patched kernel"
fi

# The kdump-compressed dump (-z): crash reads it like the ELF one.
if [ ! -s "$corez" ]; then
	notok "QEMU wrote a kdump-compressed (-z) vmcore (see $out/crash-monitor.log)"
else
	printf 'extend %s\npfcounters\nquit\n' "$so" > "$cmds.z"
	timeout 300 crash -s "$art/vmlinux" "$corez" -i "$cmds.z" > "$crashout.z" 2>&1 </dev/null
	z_cnt=$(sed -n '/pfscale.so: shared object loaded/,$p' "$crashout.z" |
		grep -E '^[a-z_0-9]+ [0-9]+$' | sort)
	if ! grep -q 'pfscale.so: shared object loaded' "$crashout.z"; then
		skip "crash reads the -z (kdump-compressed) vmcore" \
			"crash 8.0.2 cannot open it: $(grep -m1 -iE 'crash:|error|not a' "$crashout.z")"
	elif [ -n "$g_cnt" ] && [ "$g_cnt" = "$z_cnt" ]; then
		ok "pfcounters on the -z (kdump-compressed) vmcore equals the guest's counters"
	else
		notok "pfcounters on the -z vmcore equals the guest's counters: $(diff <(echo "$g_cnt") <(echo "$z_cnt") | grep '^[<>]' | head -4 | tr '\n' ' ')"
	fi
fi

# Without pfscale-layout, pfpte (which decodes PTEs with its values) says
# in one line where the file should be and how to make it; pfcounters,
# which does not need it, still works.
printf 'extend %s\npfpte %s 0x400000 0x401000\npfcounters\nquit\n' "$so" "$ready" > "$cmds.nolayout"
PFSCALE_LAYOUT=$out/no-such-pfscale-layout timeout 300 crash -s "$art/vmlinux" "$core" \
	-i "$cmds.nolayout" > "$crashout.nolayout" 2>&1 </dev/null
nl_cnt=$(sed -n '/pfscale.so: shared object loaded/,$p' "$crashout.nolayout" |
	grep -E '^[a-z_0-9]+ [0-9]+$' | sort)
if [ "$(grep -c "^pfpte: cannot read $out/no-such-pfscale-layout (No such file or directory): make it with scripts/layout.sh KERNEL_BUILD_DIR" "$crashout.nolayout")" = 1 ] &&
	[ -n "$nl_cnt" ] && [ "$nl_cnt" = "$g_cnt" ]; then
	ok "without pfscale-layout: pfpte says so in one line, pfcounters still works"
else
	notok "without pfscale-layout: pfpte says so in one line, pfcounters still works (see $crashout.nolayout)"
fi

# A pfscale-layout written for another build (its build-id line changed):
# pfpte refuses it in one line naming both build-ids; pfcounters still works.
other=$out/other-build-pfscale-layout
sed 's/^# build-id \([0-9a-f]\)/# build-id f\1/' "$art/pfscale-layout" > "$other"
printf 'extend %s\npfpte %s 0x400000 0x401000\npfcounters\nquit\n' "$so" "$ready" > "$cmds.otherbuild"
PFSCALE_LAYOUT=$other timeout 300 crash -s "$art/vmlinux" "$core" \
	-i "$cmds.otherbuild" > "$crashout.otherbuild" 2>&1 </dev/null
ob_cnt=$(sed -n '/pfscale.so: shared object loaded/,$p' "$crashout.otherbuild" |
	grep -E '^[a-z_0-9]+ [0-9]+$' | sort)
if grep -q '^# build-id f' "$other" &&
	[ "$(grep -c "^pfpte: $other is not this vmlinux's: build-id f[0-9a-f]*, vmlinux has [0-9a-f]*: " "$crashout.otherbuild")" = 1 ] &&
	[ -n "$ob_cnt" ] && [ "$ob_cnt" = "$g_cnt" ]; then
	ok "a pfscale-layout of another build: pfpte refuses it by build-id in one line, pfcounters still works"
else
	notok "a pfscale-layout of another build: pfpte refuses it by build-id in one line, pfcounters still works (see $crashout.otherbuild)"
fi

# The paging dump (-p): gdb with the kernel's and pfscale's scripts.
gout=$out/crash-gdb-paging.out
if ! command -v gdb >/dev/null || [ ! -f "$art/vmlinux-gdb.py" ]; then
	skip "gdb pf-counters on the -p vmcore" "no gdb or no vmlinux-gdb.py"
elif [ ! -s "$corep" ]; then
	notok "QEMU wrote a paging (-p) vmcore (see $out/crash-monitor.log)"
else
	timeout 300 gdb -batch -nx "$art/vmlinux" "$corep" \
		-ex "source $art/vmlinux-gdb.py" \
		-ex "source $top/gdb-scripts/pfscale.py" \
		-ex 'echo @@counters\n' -ex 'pf-counters --json' \
		-ex 'echo @@end\n' > "$gout" 2>&1 </dev/null
	p_cnt=$(awk '/^@@/ { on = ($0 == "@@counters"); next } on' "$gout" | python3 -c '
import json, sys
for k, v in json.loads(sys.stdin.read())["counters"].items():
    print(k, v)' 2>/dev/null | sort)
	# For the record: gdb on the plain ELF dump, which has no virtual
	# addresses, silently reads vmlinux's initial data instead.
	e_cnt=$(timeout 300 gdb -batch -nx "$art/vmlinux" "$core" \
		-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
		-ex 'pf-counters' 2>/dev/null </dev/null | awk '$1 == "anon_fault_locked" { print $2 }')
	echo "# gdb on the plain ELF vmcore: anon_fault_locked '$e_cnt' (guest: $(echo "$g_cnt" | awk '$1 == "anon_fault_locked" { print $2 }'))"
	if [ -n "$g_cnt" ] && [ "$g_cnt" = "$p_cnt" ]; then
		ok "gdb pf-counters --json on the -p (paging) vmcore equals the guest's counters"
	else
		notok "gdb pf-counters --json on the -p vmcore equals the guest's counters (see $gout): $(diff <(echo "$g_cnt") <(echo "$p_cnt") | grep '^[<>]' | head -4 | tr '\n' ' ')"
	fi
fi

# A kernel without the pfscale patches (PFSCALE_STOCK_ART: an unpatched 6.1
# build of the same config): extend and pfcounters say so in one line,
# pfvma (which needs no patch) still equals the guest's maps.
stock=${PFSCALE_STOCK_ART:-}
if [ -z "$stock" ]; then
	skip "on an unpatched kernel: one 'no pfscale patches' line, pfvma still works" \
		"PFSCALE_STOCK_ART (an unpatched 6.1 artifact directory) not set"
elif [ ! -f "$stock/bzImage" ] || [ ! -f "$stock/vmlinux" ] ||
	grep -q ' pfscale_counter_desc$' "$stock/System.map" 2>/dev/null; then
	notok "PFSCALE_STOCK_ART=$stock is an unpatched kernel with bzImage and vmlinux"
else
	score=$out/vmcore.stock slog=$out/crash-stock-console.log sout=$crashout.stock
	rm -f "$score" "$sock" "$slog"
	"$top/qemu/boot.sh" -q -k "$stock/bzImage" -i "$initrd" -r crashmaps,hang -M "$sock" \
		-m 512 -l "$slog" -t 600 &
	qpid=$!
	trap cleanup EXIT
	sready=$(wait_console "$slog" '^CRASHMAPS READY pid=[0-9]+$' 300 "$qpid")
	spid=${sready#CRASHMAPS READY pid=}
	[ -n "$spid" ] && monitor stop "dump-guest-memory $score" > "$out/crash-stock-monitor.log" 2>&1
	cleanup
	trap - EXIT
	printf 'extend %s\npfcounters\npfvma %s\nquit\n' "$so" "${spid:-1}" > "$cmds.stock"
	[ -s "$score" ] && timeout 300 crash -s "$stock/vmlinux" "$score" -i "$cmds.stock" \
		> "$sout" 2>&1 </dev/null
	s_maps=$(tr -d '\r' < "$slog" | sed -n 's/^CRASHMAPS \([0-9a-f]*-[0-9a-f]*\) \([^ ]*\) .*/\1 \2/p')
	s_vma=$(awk '/^START-END/ { on = 1; next } on && !/^[0-9a-f]+-[0-9a-f]+  / { exit }
		on { print $1, $2 }' "$sout" 2>/dev/null)
	if [ -z "$spid" ] || [ ! -s "$score" ]; then
		notok "unpatched kernel: h_crash_maps parked and QEMU dumped it (see $slog)"
	elif [ "$(grep -c 'no pfscale patches (no pfscale_counter_desc' "$sout")" = 2 ] &&
		grep -q '^pfcounters: this kernel has no pfscale patches' "$sout" &&
		[ "$(grep -cE '^[a-z_0-9]+ [0-9]+$' "$sout")" = 0 ] &&
		[ -n "$s_maps" ] && [ "$s_maps" = "$s_vma" ]; then
		ok "on an unpatched kernel: one 'no pfscale patches' line each from extend and pfcounters, pfvma equals maps ($(echo "$s_maps" | grep -c .) VMAs)"
	else
		notok "on an unpatched kernel: one 'no pfscale patches' line, pfvma still works (see $sout)"
	fi
	[ "$failed" = 0 ] && rm -f "$score"
fi

# The dumps (512 MB each, less for -z) are kept only when something failed,
# to look into, or when PFSCALE_KEEP_VMCORE is set.
[ "$failed" = 0 ] && [ -z "${PFSCALE_KEEP_VMCORE:-}" ] && rm -f "$core" "$corez" "$corep"
exit 0
