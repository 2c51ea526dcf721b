#!/bin/bash
# Debian's own kernel config keeps the pfscale options, and the .c files the
# series touches compile under it without a warning (scripts/debian-config.sh).
# make test runs it (about 2.5 min cold).
# Cold it applies the series in its own worktree and compiles (under the
# kernel build lock); warm (same patches, Debian config, compiler, script)
# it replays the cached verdict.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/common.sh
. "$top/scripts/common.sh"
out=${PFSCALE_OUT:-$top/build/test}
mkdir -p "$out"
log=$out/debian-config.log

echo "1..3"
start=$(date +%s)
"$top/scripts/debian-config.sh" > "$log.out" 2> "$log"
status=$?
secs=$(($(date +%s) - start))
cat "$log.out" >> "$log"

# result KEY: the script's "debian-config: KEY..." line, without the prefix.
result() { sed -n "s/^debian-config: \($1.*\)/\1/p" "$log.out" | head -1; }

# The diagnostics of the run (the failing dependencies, the warnings) as TAP
# comments, once, before the first failing check.
diag_done=
diag() {
	[ -n "$diag_done" ] && return
	diag_done=1
	grep -v '^pfscale: \(waiting\|creating\|applying\|make prepare\|compiling\)' "$log" |
		sed 's/^/# /' | head -60
}

for s in PFSCALE_ATOMIC_PTE PFSCALE_STATS; do
	r=$(result "CONFIG_$s=")
	what="debian-config: CONFIG_$s=y survives Debian's config.amd64_none_amd64 (olddefconfig)"
	if [[ "$r" == "CONFIG_$s=y "* ]]; then
		echo "ok - $what"
	else
		diag
		echo "not ok - $what: ${r:-no result (script exited $status, $log)}"
	fi
done

objs=$(result objects)
time=$(result time)
what="debian-config: the .c files the series touches under mm/, arch/x86/, fs/proc/ compile with Debian's config and 0 warnings"
if [ $status = 0 ] && [[ "$objs" == *" 0 warnings:"* ]]; then
	echo "ok - $what (${objs#objects }; ${time#time }; this run ${secs}s)"
elif [ -z "$objs" ]; then
	diag
	echo "not ok - $what (not compiled: script exited $status after ${secs}s, $log)"
else
	diag
	echo "not ok - $what (${objs#objects }; ${time#time }; this run ${secs}s)"
fi
