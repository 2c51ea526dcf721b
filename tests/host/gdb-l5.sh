#!/bin/bash
# pf-walk and pf-range on a 5-level paging guest: boot the test kernel
# (CONFIG_X86_5LEVEL=y: 5 levels when the CPU has LA57, else 4) on a CPU
# with LA57, let h_gdb_map map its region, and check the walk (5 levels,
# p4d not folded) and the PFNs against the guest's /proc/self/pagemap.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/gdb-l5.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
art=${PFSCALE_ART:?PFSCALE_ART not set}
initrd=${PFSCALE_INITRD:?PFSCALE_INITRD not set}
out=${PFSCALE_OUT:-$top/build/test}
name="gdb: pf-walk/pf-range on a 5-level paging guest (LA57): 5 levels, PFNs equal pagemap's"
if ! grep -qx 'CONFIG_X86_5LEVEL=y' "$art/.config" 2>/dev/null; then
	echo "not ok - $name (no CONFIG_X86_5LEVEL=y in $art/.config)"
	exit 0
fi
mkdir -p "$out"
log=$out/gdb-l5-console.log port=$(free_port 1260)
PFSCALE_QEMU_CPU=qemu64,+la57 "$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" \
	-r gdbmap -g -p "$port" -l "$log" -t 300 >"$out/gdb-l5-boot.out" 2>&1 &
qpid=$!
trap 'stop_boot "$qpid"' EXIT
line=$(wait_console "$log" 'GDBMAP pid=' 200 "$qpid")
if [ -z "$line" ]; then
	echo "not ok - $name (no GDBMAP line in $log)"
	exit 0
fi
line=GDBMAP\ ${line#*GDBMAP }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
pid=$(field pid) addr=$(field addr) pfn0=$(field pfn0)
end=$(printf '0x%x' $((addr + 64 * 4096)))
gout=$(timeout 200 gdb -batch -nx "$art/vmlinux" -ex "source $art/vmlinux-gdb.py" \
	-ex "source $top/gdb-scripts/pfscale.py" -ex "target remote :$port" \
	-ex 'echo @@walk\n' -ex "pf-walk $addr $pid" \
	-ex 'echo @@range\n' -ex "pf-range $addr $end $pid" 2>&1)
echo "$gout" > "$out/gdb-l5.out"
walk=$(sed -n '/^@@walk/,/^@@range/p' <<<"$gout")
range=$(sed -n '/^@@range/,$p' <<<"$gout")
if grep -q 'levels 5' <<<"$walk" && grep -q '^ *p4d\[' <<<"$walk" &&
	grep -q "pfn=$pfn0 " <<<"$walk" && grep -q "pfn 0x$(printf '%x' "$pfn0")" <<<"$range" &&
	! grep -q Traceback <<<"$gout"; then
	echo "ok - $name (pfn $pfn0)"
else
	echo "not ok - $name (see $out/gdb-l5.out; guest pfn0 $pfn0)"
fi
