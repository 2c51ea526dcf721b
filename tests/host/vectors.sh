#!/bin/bash
# The golden vectors (tests/vectors/decode.json) against both readers'
# decode rules: gdb's decode.py and crash's decode core (crash/decode.c,
# built as the host program build/decode-vectors). No guest, no debugger:
# tests/host/vectors.py prints the TAP.
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! log=$(make -s -C "$top" build/decode-vectors 2>&1); then
	echo "1..1"
	echo "not ok 1 - vectors: build/decode-vectors does not build"
	printf '#   %s\n' "$log" | head -20
	exit 0
fi
exec python3 "$top/tests/host/vectors.py" "$top/build/decode-vectors"
