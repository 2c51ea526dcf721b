#!/bin/bash
# Host-side test of the pfscale gdb helpers (gdb-scripts/pfscale.py): boot
# the guest with a gdbstub, let tests/guest/h_gdb_map map a known region,
# attach gdb and check pf-walk, pf-range, pf-counters and pf-rss against
# what the guest saw in /proc/self/pagemap. Prints TAP-style lines.
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
	"pf-counters --json has anon_fault_locked > 0"
	"pf-rss --json lists the pid and its threads"
	"pf-rss split anon pages >= $touched"
	"pf-walk on an unmapped address: one line, no traceback"
	"pf-rss on pid 99999: one clear line"
	"no Python traceback in the gdb output")
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
port=$((1234 + $$ % 1000))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done

qpid=
cleanup() {
	[ -n "$qpid" ] || return
	# boot.sh runs QEMU under timeout(1), which forwards TERM to QEMU.
	local c
	for c in $(pgrep -P "$qpid"); do kill "$c" 2>/dev/null; done
	kill "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
	# A QEMU started while boot.sh was dying: ours is the one on our port.
	for c in $(pgrep -f -- "-gdb tcp::$port( |\$)"); do kill "$c" 2>/dev/null; done
	qpid=
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

rm -f "$log" "$gout"	# a stale log must not satisfy the wait below
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r gdbmap -g -p "$port" \
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

timeout 300 gdb -batch -nx "$art/vmlinux" \
	-ex "source $art/vmlinux-gdb.py" \
	-ex "source $top/gdb-scripts/pfscale.py" \
	-ex "target remote :$port" \
	-ex 'echo @@walk\n' -ex "pf-walk $addr $pid" \
	-ex 'echo @@range\n' -ex "pf-range $addr $end $pid" \
	-ex 'echo @@counters\n' -ex 'pf-counters --json' \
	-ex 'echo @@rss\n' -ex "pf-rss $pid --json" \
	-ex 'echo @@unmapped\n' -ex "pf-walk 0x1000 $pid" \
	-ex 'echo @@badpid\n' -ex 'pf-rss 99999' \
	-ex 'echo @@end\n' >"$gout" 2>&1
cleanup
section() { awk -v s="@@$1" '/^@@/ { on = ($0 == s); next } on' "$gout"; }

section walk | grep -q "pfn=$pfn0 "
check $? "want pfn=$pfn0: $(section walk | tail -1)"

section range | grep -q ": $touched present pages in "
check $? "$(section range | tail -1)"

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

! grep -q Traceback "$gout" && grep -q '^@@end' "$gout"
check $? "see $gout"
exit 0
