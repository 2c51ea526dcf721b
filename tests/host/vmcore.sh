#!/bin/bash
# Host-side test of make vmcore as a new user meets it: crash/vmcore.sh
# boots the guest on a race (guest/run/vmcore), dumps it in its three
# formats and prints "PFSCALE-VMCORE race: h_race_loop racing in pid N
# (threads T...; ...)" with the command lines that open the dumps. The
# checks read the PID from that line only, and ask the readers, on the
# dumps, whether it names the racing process: comm h_race_loop, exactly
# the threads listed, the racing region among its VMAs, the printed crash
# and gdb command lines working on it.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/vmcore.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
dir=$out/vmcore-test vout=$out/vmcore-test.out

checks=("crash/vmcore.sh dumped the racing guest in three formats"
	"its race line names a PID and its threads"
	"pfps on the dump: the PID is a thread group leader named h_race_loop"
	"pfps on the dump: the PID's threads are exactly the ones the line lists"
	"pfvma on the dump: the PID maps h_race_loop and its racing region"
	"the crash command lines it printed run on the dump without an error"
	"pfps on the kdump-compressed dump finds the same process"
	"gdb on the -p dump (the printed command line): pf-rss names h_race_loop and its threads")
echo "1..${#checks[@]}"
done_checks=0 failed=0
result() {	# result 0|1 [DETAIL]: the next check, in the order above
	if [ "$1" = 0 ]; then
		echo "ok - vmcore: ${checks[$done_checks]}"
	else
		echo "not ok - vmcore: ${checks[$done_checks]}${2:+ ($2)}"
		failed=1
	fi
	done_checks=$((done_checks + 1))
}
fail_rest() {
	while [ $done_checks -lt ${#checks[@]} ]; do result 1 "$1"; done
	exit 0
}
for tool in gdb crash; do
	command -v $tool >/dev/null || fail_rest "no $tool (make deps installs it)"
done

rm -rf "$dir" "$vout"
"$top/crash/vmcore.sh" -k "$art" -i "$initrd" -o "$dir" -c 4 -m 512 >"$vout" 2>&1
rc=$?
[ $rc = 0 ] && [ -s "$dir/vmcore" ] && [ -s "$dir/vmcore.kdump" ] && [ -s "$dir/vmcore.paging" ]
result $? "exit $rc; see $vout"
[ $rc = 0 ] || fail_rest "no dumps"

# The line as a user reads it, and nothing else: the PID and the threads.
line=$(grep -m1 'PFSCALE-VMCORE race: ' "$vout")
pid=$(sed -n 's/.* racing in pid \([0-9][0-9]*\) (threads \([0-9 ]*\);.*/\1/p' <<<"$line")
threads=$(sed -n 's/.* racing in pid [0-9]* (threads \([0-9 ]*\);.*/\1/p' <<<"$line" |
	tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')
region=$(sed -n 's/.* region=\(0x[0-9a-f]*-0x[0-9a-f]*\) .*/\1/p' <<<"$line")
nthreads=$(wc -w <<<"$threads")
[ -n "$pid" ] && [ "$nthreads" -gt 1 ] && [ -n "$region" ]
result $? "line: '${line:-none}'"
[ -n "$pid" ] || fail_rest "no PID in the race line"

# crash_run DUMP OUTFILE CMD...: crash with the extension on DUMP.
crash_run() {
	local dump=$1 res=$2
	shift 2
	{
		echo "extend $dir/pfscale.so"
		printf '%s\n' "$@"
		echo quit
	} >"$res.cmds"
	timeout 300 crash -s "$art/vmlinux" "$dump" -i "$res.cmds" >"$res" 2>&1 </dev/null
}
crash_run "$dir/vmcore" "$dir/crash.out" "pfps -j" "pfvma -j $pid"
# tasks_of JSON-OUTPUT PID: "LEADER-COMM|TID TID..." of PID's thread group.
tasks_of() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
pid = int(sys.argv[2])
for line in open(sys.argv[1], errors="replace"):
    if line.startswith('{"tasks"'):
        tasks = json.loads(line)["tasks"]
        comm = [t["comm"] for t in tasks if t["pid"] == pid and t["tgid"] == pid]
        tids = sorted(t["pid"] for t in tasks if t["tgid"] == pid)
        print("%s|%s" % (comm[0] if comm else "", " ".join(map(str, tids)) + " "))
        break
EOF
}
ps=$(tasks_of "$dir/crash.out" "$pid")
[ "${ps%%|*}" = h_race_loop ]
result $? "pfps: '${ps%%|*}' for pid $pid; see $dir/crash.out"
[ "${ps#*|}" = "$threads" ]
result $? "dump: ${ps#*|}; line: $threads"

maps=$(python3 - "$dir/crash.out" "$region" <<'EOF'
import json, sys
start, end = (int(x, 16) for x in sys.argv[2].split("-"))
for line in open(sys.argv[1], errors="replace"):
    if line.startswith('{"pid"'):
        vmas = json.loads(line)["vmas"]
        names = {v.get("name", "") for v in vmas}
        inside = any(int(v["start"], 16) <= start and end <= int(v["end"], 16) for v in vmas)
        print("binary" if any(n.endswith("h_race_loop") for n in names) else "no-binary",
              "region" if inside else "no-region",
              "busybox" if any("busybox" in n for n in names) else "")
EOF
)
[ "$maps" = "binary region " ]
result $? "pfvma $pid: '$maps'; see $dir/crash.out"

# The crash lines vmcore.sh printed ("crash> CMD"), as a user types them.
mapfile -t printed < <(sed -n 's/^  crash> //p' "$vout" | grep -v '^extend ')
crash_run "$dir/vmcore" "$dir/crash-printed.out" "${printed[@]}"
[ "${#printed[@]}" -ge 4 ] && printf '%s\n' "${printed[@]}" | grep -qx "pfvma $pid" &&
	! grep -qE '^pf[a-z]*: |^crash: |command not found' "$dir/crash-printed.out" &&
	grep -q "h_race_loop" "$dir/crash-printed.out"
result $? "${#printed[@]} lines; see $dir/crash-printed.out"

crash_run "$dir/vmcore.kdump" "$dir/crash-kdump.out" "pfps -j"
[ "$(tasks_of "$dir/crash-kdump.out" "$pid")" = "$ps" ]
result $? "see $dir/crash-kdump.out"

# gdb as printed: vmlinux, the -p dump, vmlinux-gdb.py and pfscale.py.
timeout 300 gdb -batch -nx -iex 'set auto-load python-scripts off' "$art/vmlinux" "$dir/vmcore.paging" \
	-ex "source $art/vmlinux-gdb.py" -ex "source $top/gdb-scripts/pfscale.py" \
	-ex "pf-rss $pid --json" >"$dir/gdb.out" 2>&1 </dev/null
rss=$(python3 - "$dir/gdb.out" <<'EOF'
import json, sys
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("{"):
        r = json.loads(line)
        print(r["comm"], " ".join(str(t) for t in sorted(t["pid"] for t in r["threads"])) + " ")
        break
EOF
)
[ -n "$rss" ] && [ "$rss" = "h_race_loop $threads" ] && ! grep -q Traceback "$dir/gdb.out"
result $? "pf-rss: '$rss'; see $dir/gdb.out"

# The dumps (1.5 GB) are kept only when something failed, or with PFSCALE_KEEP_VMCORE.
[ "$failed" = 0 ] && [ -z "${PFSCALE_KEEP_VMCORE:-}" ] && rm -f "$dir"/vmcore*
exit 0
