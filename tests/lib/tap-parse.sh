#!/bin/bash
# The parser of tests/run.sh, on its own: read one recorded log and print
# one line per result, "PASS  TEXT", "FAIL  TEXT" or "SKIP  TEXT" (and
# "      TEXT" diagnostics). It needs no guest: tests/host/runner.sh feeds
# it recorded logs (tests/lib/recorded/) that must fail.
#
#   tap-parse.sh guest LABEL LOG RC [PROGRAM...]
#       a guest boot's console log; RC is QEMU's exit status (124: timed
#       out). Every program guest/run/prog ran is one result more: it must
#       print one plan, as many results as planned, and exit 0; PROGRAMs
#       (and those in the log's "# pfscale-guest: programs" line) must run.
#       Then: the guest reached its done marker; no kernel error in the log.
#   tap-parse.sh host LABEL OUTPUT RC
#       a host test's output and exit status: one program, as above.
#   tap-parse.sh console LABEL LOG
#       any other boot's console log: only the kernel error scan.
#   tap-parse.sh skip LABEL TEXT
#       one skip made by the runner itself, through the allowlist.
#
# Skips pass only if tests/expected-skips (PFSCALE_SKIPS=FILE to use
# another) has an entry for them; the kernel error patterns are
# tests/lib/kernel-errors. Exit status 0 if no FAIL line was printed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
skips=${PFSCALE_SKIPS:-$here/../expected-skips}
mode=${1:-} label=${2:-} file=${3:-}
usage() { sed -n '7,18s/^# \{0,1\}//p' "$0" >&2; exit 2; }

# kernel_error_re: the patterns of tests/lib/kernel-errors as one ERE;
# kernel_error_ok_re: its exceptions ("!" lines).
kernel_error_re() {
	grep -v -e '^#' -e '^$' -e '^!' "$here/kernel-errors" | paste -sd'|'
}
kernel_error_ok_re() {
	sed -n 's/^!//p' "$here/kernel-errors" | paste -sd'|'
}

parse() {	# parse MODE RC EXPECT [FILE]
	# The regexes go through the environment: awk -v would take their
	# backslashes for escapes.
	ERRRE=$(kernel_error_re) OKRE=$(kernel_error_ok_re) \
		awk -v mode="$1" -v label="$label" -v rc="$2" -v expect="$3" \
		-v allow="$skips" -v logname="$file" \
		-f "$here/tap-parse.awk" "${4:-/dev/stdin}"
}

case $mode in
guest)
	[ $# -ge 4 ] || usage
	rc=$4
	shift 4
	res=$(parse guest "$rc" "$*" "$file")
	;;
host)
	[ $# = 4 ] || usage
	res=$(parse host "$4" "" "$file")
	;;
console)
	[ $# = 3 ] || usage
	res=$(parse console 0 "" "$file")
	;;
skip)
	[ $# = 3 ] || usage
	res=$(echo "ok - $3 # SKIP" | parse skip 0 "")
	;;
*) usage ;;
esac
[ -n "$res" ] && printf '%s\n' "$res"
! grep -q '^FAIL' <<<"$res"
