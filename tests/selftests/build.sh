#!/bin/bash
# Build the mm selftests that guest/run/vmselftests.list names, statically,
# from the kernel tree the test kernel was built from. Prints the binaries.
#
#   tests/selftests/build.sh SRC OUTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:?usage: build.sh SRC OUTDIR} out=${2:?usage: build.sh SRC OUTDIR}
vm=$src/tools/testing/selftests/vm
[ -d "$vm" ] || { echo "pfscale: no $vm" >&2; exit 1; }
mkdir -p "$out"
for t in $(sed -n 's/^\([a-z0-9_-][a-z0-9_-]*\).*/\1/p' "$top/guest/run/vmselftests.list" | sort -u); do
	bin=$out/vm-$t
	if [ ! -x "$bin" ] || [ "$vm/$t.c" -nt "$bin" ] || [ "$0" -nt "$bin" ]; then
		extra=()
		grep -q '"vm_util.h"' "$vm/$t.c" && extra=("$vm/vm_util.c")
		# -include sys/syscall.h: the selftests get __NR_* from the
		# kernel's headers in their own build; without it mrelease_test
		# falls back to "#define __NR_process_mrelease -1" and skips.
		gcc -static -O2 -w -pthread -include sys/syscall.h -I"$vm/.." -I"$src" \
			-I"$src/usr/include" -I"$src/tools/include/uapi" \
			-o "$bin" "$vm/$t.c" "${extra[@]}" -lrt ||
			{ echo "pfscale: building selftest $t failed" >&2; exit 1; }
	fi
	echo "$bin"
done
