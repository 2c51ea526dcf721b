#!/bin/bash
# Host-side test: dump a live guest's memory from the QEMU monitor and check
# that the crash extension crash/pfscale.so reads the same pfscale figures
# from the vmcore as the guest printed just before the dump.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/crash.sh
#
# Prints TAP-style "ok - crash: ..." / "not ok - crash: ..." lines.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
art=${PFSCALE_ART:?} initrd=${PFSCALE_INITRD:?} out=${PFSCALE_OUT:?}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/crash-console.log sock=$out/crash-monitor.sock core=$out/vmcore
so=$out/pfscale.so cmds=$out/crash-cmds crashout=$out/crash-output.txt

failed=0
ok() { echo "ok - crash: $1"; }
notok() { echo "not ok - crash: $1"; failed=1; }
skip() { echo "ok - crash: $1 # SKIP $2"; }

if ! command -v crash >/dev/null || [ ! -f /usr/include/crash/defs.h ]; then
	skip "extension reads the vmcore" "crash or /usr/include/crash/defs.h missing"
	exit 0
fi
if gcc -Wall -Werror -shared -fPIC -nostartfiles -D_GNU_SOURCE -DX86_64 \
	-I/usr/include/crash -o "$so" "$top/crash/pfscale.c" 2>"$out/crash-gcc.log"; then
	ok "extension crash/pfscale.c builds"
else
	notok "extension crash/pfscale.c builds: $(head -3 "$out/crash-gcc.log")"
	exit 0
fi

# monitor CMD...: send HMP commands, wait for each one's prompt.
monitor() {
	python3 - "$sock" "$@" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(300)
def until_prompt():
    buf = b""
    while not buf.endswith(b"(qemu) "):
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.decode(errors="replace")
until_prompt()
for c in sys.argv[2:]:
    s.sendall(c.encode() + b"\n")
    sys.stdout.write(until_prompt())
PY
}

rm -f "$core" "$sock" "$log"	# a stale READY must not be taken for this boot's
"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -r crashfig -M "$sock" \
	-l "$log" -t 600 &
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

ready=$(wait_console "$log" '^CRASHFIG READY pid=[0-9]+$' 120 "$qpid")
ready=${ready#CRASHFIG READY pid=}
if [ -z "$ready" ]; then
	notok "guest helper h_crash_fig printed READY within 120 s (see $log)"
	exit 0
fi
ok "guest helper h_crash_fig is ready (pid $ready)"
pid=$ready

# dump-guest-memory without -d is synchronous: the prompt returns when done.
monitor stop "dump-guest-memory $core" "info status" > "$out/crash-monitor.log" 2>&1
if [ -s "$core" ] && grep -q paused "$out/crash-monitor.log"; then
	ok "QEMU dumped guest memory to a vmcore ($(du -m "$core" | cut -f1) MB)"
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
pfpte $pid 0 800000000000
help pfcounters pfps pfrss pfpte
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
c_thr=$(echo "$c_rss" | sed -n 's/^thread \([0-9]*\) events [0-9-]* file [0-9-]* anon \([0-9-]*\) .*/\1 \2/p' | sort)
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
c_pte=$(sed -n 's/^total \([0-9]*\)$/\1/p' "$crashout")
echo "# pfpte total present user pages $c_pte, guest rss_scan $g_scan"
if [ -n "$c_pte" ] && [ -n "$g_scan" ] && [ "$c_pte" -ge "$g_scan" ] && [ "$c_pte" -le $((g_scan + 8)) ]; then
	ok "pfpte finds the guest's rss_scan present pages ($c_pte vs $g_scan)"
else
	notok "pfpte finds the guest's rss_scan present pages (pfpte '$c_pte', rss_scan '$g_scan')"
fi

# pfps: every thread of the helper, with its tgid and comm.
nthr=$(echo "$g_thr" | grep -c .)
c_ps=$(awk -v p="$pid" '$2 == p && $3 == "h_crash_fig" && $5 ~ /^[0-9a-f]+$/ && $5 != "0"' "$crashout" | wc -l)
if [ "$nthr" -gt 0 ] && [ "$c_ps" = "$nthr" ] && grep -Eq "^ +$pid +$pid +h_crash_fig " "$crashout"; then
	ok "pfps lists pid $pid and its $nthr threads (tgid $pid, comm h_crash_fig)"
else
	notok "pfps lists pid $pid and its $nthr threads (found $c_ps)"
fi
if [ "$(grep -c '^SYNOPSIS' "$crashout")" = 4 ] && grep -q '^  pfrss pid$' "$crashout"; then
	ok "help shows the four pfscale commands"
else
	notok "help shows the four pfscale commands"
fi

# The 1 GB vmcore is kept only when something failed, to look into, or
# when PFSCALE_KEEP_VMCORE is set.
[ "$failed" = 0 ] && [ -z "${PFSCALE_KEEP_VMCORE:-}" ] && rm -f "$core"
exit 0
