#!/bin/bash
# The debuggers on a 5-level paging guest: boot the test kernel
# (CONFIG_X86_5LEVEL=y: 5 levels when the CPU has LA57, else 4) on a CPU
# with LA57, let h_gdb_map map its region (64 pages, 48 touched), check
# gdb's pf-walk (5 levels, p4d not folded) and pf-range against the
# guest's /proc/self/pagemap, then dump the guest and check crash's pfpte
# over the region.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/paging-l5.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
name="gdb: pf-walk/pf-range on a 5-level paging guest (LA57): 5 levels, PFNs equal pagemap's"
cname="crash: pfpte on a 5-level guest's dump: the 48 present pages of the region"
echo "1..2"
notok_all() { echo "not ok - $name ($1)"; echo "not ok - $cname ($1)"; exit 0; }
if ! grep -qx 'CONFIG_X86_5LEVEL=y' "$art/.config" 2>/dev/null; then
	notok_all "no CONFIG_X86_5LEVEL=y in $art/.config"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/l5-console.log port=$(free_port 1260) sock=$out/l5-monitor.sock core=$out/l5-vmcore
rm -f "$log" "$sock" "$core"
PFSCALE_QEMU_CPU=qemu64,+la57 "$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" \
	-r gdbmap -g -p "$port" -M "$sock" -m 512 -l "$log" -t 300 >"$out/l5-boot.out" 2>&1 &
qpid=$!
trap 'stop_boot "$qpid"; rm -f "$core"' EXIT
line=$(wait_console "$log" 'GDBMAP pid=' 200 "$qpid")
[ -n "$line" ] || notok_all "no GDBMAP line in $log"
line=GDBMAP\ ${line#*GDBMAP }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
pid=$(field pid) addr=$(field addr) pfn0=$(field pfn0)
end=$(printf '0x%x' $((addr + 64 * 4096)))
gout=$(timeout 200 gdb -batch -nx "$art/vmlinux" -ex "source $art/vmlinux-gdb.py" \
	-ex "source $top/gdb-scripts/pfscale.py" -ex "target remote :$port" \
	-ex 'echo @@walk\n' -ex "pf-walk $addr $pid" \
	-ex 'echo @@range\n' -ex "pf-range $addr $end $pid" 2>&1)
echo "$gout" > "$out/l5-gdb.out"
walk=$(sed -n '/^@@walk/,/^@@range/p' <<<"$gout")
range=$(sed -n '/^@@range/,$p' <<<"$gout")
if grep -q 'levels 5' <<<"$walk" && grep -q '^ *p4d\[' <<<"$walk" &&
	grep -q "pfn=$pfn0 " <<<"$walk" && grep -q "pfn 0x$(printf '%x' "$pfn0")" <<<"$range" &&
	! grep -q Traceback <<<"$gout"; then
	echo "ok - $name (pfn $pfn0)"
else
	echo "not ok - $name (see $out/l5-gdb.out; guest pfn0 $pfn0)"
fi

# The same guest, post mortem: crash walks 5 levels too.
python3 "$top/crash/hmp.py" "$sock" stop "dump-guest-memory $core" >"$out/l5-monitor.log" 2>&1
so=$out/pfscale-l5.so cout=$out/l5-crash.out
if [ ! -s "$core" ]; then
	echo "not ok - $cname (no dump; see $out/l5-monitor.log)"
elif ! command -v crash >/dev/null ||
	! { make -s -C "$top" build/pfscale.so >"$cout" 2>&1 && cp "$top/build/pfscale.so" "$so"; }; then
	echo "not ok - $cname (no crash, or the extension does not build: $(head -1 "$cout"))"
else
	printf 'extend %s\npfpte %s %x %x\nquit\n' "$so" "$pid" "$addr" "$end" >"$out/l5-crash-cmds"
	timeout 300 crash -s "$art/vmlinux" "$core" -i "$out/l5-crash-cmds" >"$cout" 2>&1 </dev/null
	# runs are PFN-contiguous too: the first starts at the region
	if grep -qx 'total 48' "$cout" &&
		grep -q "^$(printf '%x' "$addr")-[0-9a-f]* pfn [0-9a-f]*-[0-9a-f]* pages [0-9]*\$" "$cout"; then
		echo "ok - $cname"
	else
		echo "not ok - $cname (see $cout)"
	fi
fi
