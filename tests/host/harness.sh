#!/bin/bash
# The harness fails, clearly and quickly, on a guest that hangs or panics.
top=$(cd "$(dirname "$0")/../.." && pwd)
art=${PFSCALE_ART:?} initrd=${PFSCALE_INITRD:?} out=${PFSCALE_OUT:?}

start=$(date +%s)
msg=$("$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 1 -m 256 -t 15 -r hang \
	-l "$out/hang-console.log" 2>&1)
rc=$?
took=$(( $(date +%s) - start ))
if [ $rc = 124 ] && [ $took -lt 40 ] && grep -q "timed out after 15s" <<<"$msg"; then
	echo "ok - harness: a hung guest is stopped by the timeout (exit 124 after ${took}s)"
else
	echo "# rc=$rc took=${took}s: $msg"
	echo "not ok - harness: a hung guest is stopped by the timeout"
fi

"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 1 -m 256 -t 60 -r panic \
	-l "$out/panic-console.log" >/dev/null 2>&1
rc=$?
if [ $rc != 124 ] && grep -q "Kernel panic" "$out/panic-console.log" &&
	! grep -q "pfscale-guest: done" "$out/panic-console.log"; then
	echo "ok - harness: a panicking guest ends QEMU and leaves the panic in the log (no done marker)"
else
	echo "not ok - harness: a panicking guest ends QEMU and leaves the panic in the log (rc=$rc)"
fi
