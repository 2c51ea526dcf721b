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
#       Then: the guest reached its done marker, with rc=0, and QEMU exited
#       0; no kernel error in the log.
#   tap-parse.sh host LABEL OUTPUT RC
#       a host test's output and exit status: one program, as above.
#   tap-parse.sh console LABEL LOG
#       any other boot's console log: only the kernel error scan.
#   tap-parse.sh skip LABEL TEXT
#       one skip made by the runner itself, through the allowlist.
#
# Skips pass only if tests/expected-skips (PFSCALE_SKIPS=FILE to use
# another) has an entry for them; the kernel error patterns are
# tests/lib/kernel-errors (missing or without a pattern: a FAIL, not a scan
# that is off). The last line is the end line, "END   [LABEL] LOG": printed
# once the log was read to the end; awk failing (a malformed pattern, a log
# that cannot be read) is a FAIL. tests/run.sh fails a parse without the
# end line. Exit status 0 if no FAIL line was printed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
skips=${PFSCALE_SKIPS:-$here/../expected-skips}
mode=${1:-} label=${2:-} file=${3:-}
usage() { sed -n '7,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }
errors=$here/kernel-errors

# kernel_error_re: the patterns of tests/lib/kernel-errors as one ERE;
# kernel_error_ok_re: its exceptions ("!" lines); errors_why: what is wrong
# with the file if it gives no pattern.
kernel_error_re() {
	grep -v -e '^#' -e '^$' -e '^!' "$errors" 2>/dev/null | paste -sd'|'
}
kernel_error_ok_re() {
	sed -n '/^!</d; s/^!//p' "$errors" 2>/dev/null | paste -sd'|'
}
# "!<" lines: a report header that is expected together with the stack
# dump the kernel prints after it (through its "</TASK>" line).
kernel_error_block_re() {
	sed -n 's/^!<//p' "$errors" 2>/dev/null | paste -sd'|'
}
errors_why() {
	if [ ! -f "$errors" ]; then
		echo "$errors is missing"
	elif [ ! -r "$errors" ]; then
		echo "$errors cannot be read"
	else
		echo "$errors has none"
	fi
}

awkerr=$(mktemp)
trap 'rm -f "$awkerr"' EXIT
parse() {	# parse MODE RC EXPECT [FILE]
	local res rc re why=
	re=$(kernel_error_re)
	[ -n "$re" ] || why=$(errors_why)
	# The regexes go through the environment: awk -v would take their
	# backslashes for escapes.
	res=$(ERRRE=$re OKRE=$(kernel_error_ok_re) BLOCKRE=$(kernel_error_block_re) ERRWHY=$why \
		awk -v mode="$1" -v label="$label" -v rc="$2" -v expect="$3" \
		-v allow="$skips" -v logname="$file" \
		-f "$here/tap-parse.awk" "${4:-/dev/stdin}" 2>"$awkerr")
	rc=$?
	# The end line is the last one awk prints, when it has read the log.
	if [ $rc = 0 ] && [[ ${res##*$'\n'} == "END   "* ]]; then
		printf '%s\n' "$res"
		return
	fi
	[ -n "$res" ] && grep -v '^END   ' <<<"$res"
	echo "FAIL  [$label] the parser read ${file:--} to the end (awk exit $rc$([ $rc = 0 ] && echo ', no end line'): $(head -n1 "$awkerr"))$(malformed)"
	echo "END   [$label] ${file:--}"
}

# malformed: "; malformed pattern in FILE: P" for each pattern of
# tests/lib/kernel-errors that awk cannot compile.
malformed() {
	local p
	while IFS= read -r p; do
		case $p in '#'*|'') continue ;; esac
		P=${p#!}; P=${P#<} awk 'BEGIN { if ("" ~ ENVIRON["P"]) x = 1 }' 2>/dev/null ||
			printf '; malformed pattern in %s: %s' "$errors" "$p"
	done 2>/dev/null < "$errors"
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
	file=
	res=$(echo "ok - $3 # SKIP" | parse skip 0 "")
	;;
*) usage ;;
esac
[ -n "$res" ] && printf '%s\n' "$res"
! grep -q '^FAIL' <<<"$res"
