#!/bin/bash
# Build the mm selftests that guest/run/vmselftests.list names, statically,
# from the kernel tree the test kernel was built from. Prints the binaries.
#
#   tests/selftests/build.sh SRC OUTDIR
#
# A list line is [hugepages=N] PROGRAM [ARGS]; PROGRAM is built from
# tools/testing/selftests/vm/PROGRAM.c. Those that include <numa.h>
# (ksm_tests, migration) link libnuma statically, as the selftests'
# Makefile links it (-lnuma): Debian's libnuma-dev has numa.h and libnuma.a.
# migration, soft-dirty and khugepaged are built with edits (see below).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:?usage: build.sh SRC OUTDIR} out=${2:?usage: build.sh SRC OUTDIR}
vm=$src/tools/testing/selftests/vm
[ -d "$vm" ] || { echo "pfscale: no $vm" >&2; exit 1; }
mkdir -p "$out"
# migration: its three tests each migrate a page back and forth between
# the two nodes for RUNTIME seconds (60 upstream: three minutes per boot
# under TCG), 5 s each here; and a move_pages() that did not move the page
# is retried, up to 100 times in a row, before the test fails: the fix of
# later kernels' migration.c (MAX_RETRIES 100, "Migration is best effort;
# try again"), without which shared_anon failed on the
# pristine 6.1 kernel here. Each edit must apply, or the build fails.
migration_edit() {
	sed -e 's/^#define RUNTIME (60)$/#define RUNTIME (5)\n#define MAX_RETRIES 100/' \
		-e 's/^\tint status = 0;$/\tint status = 0, failures = 0;/' \
		-e 's/^\t\tif (ret) {$/&\n\t\t\tif (ret > 0 \&\& ++failures < MAX_RETRIES)\n\t\t\t\tcontinue;/' \
		-e 's/^\t\ttmp = n2;$/\t\tfailures = 0;\n&/' "$1" > "$2"
	[ "$(grep -c -F -e '#define RUNTIME (5)' -e '#define MAX_RETRIES 100' \
		-e '++failures < MAX_RETRIES' -e 'failures = 0;' "$2")" = 5 ] ||
		{ echo "pfscale: $1: the migration edits did not apply" >&2; exit 1; }
}
# soft-dirty: test_simple and test_hugepage clear the soft-dirty bits
# (clear_refs walks the whole mm) and fault a page TEST_ITERATIONS times,
# 10000 upstream: 70 s per boot under TCG; 1000 here (7 s), the same
# checks a tenth as often.
soft_dirty_edit() {
	sed -e 's/^#define TEST_ITERATIONS 10000$/#define TEST_ITERATIONS 1000/' "$1" > "$2"
	grep -q -x '#define TEST_ITERATIONS 1000' "$2" ||
		{ echo "pfscale: $1: the soft-dirty edit did not apply" >&2; exit 1; }
}
# khugepaged: collapse_compound_extreme (both anonymous contexts) makes
# 512 THPs one after another, each kept mapped by one page until the
# deferred-split shrinker frees the rest; in the 1 GiB guest its THP
# allocation fails or its collapse comes too late, as often on the
# unpatched kernel as on the patched paths, even in a fresh boot (the
# pass rates: the commit "guest: the khugepaged selftest again"). Left
# out; the rest run (guest/run/vmselftests-fresh.list).
khugepaged_edit() {
	grep -v -x -e '	TEST(collapse_compound_extreme, khugepaged_context, anon_ops);' \
		-e '	TEST(collapse_compound_extreme, madvise_context, anon_ops);' "$1" > "$2"
	[ "$(($(wc -l < "$1") - $(wc -l < "$2")))" = 2 ] ||
		{ echo "pfscale: $1: the khugepaged edit did not apply" >&2; exit 1; }
}
for t in $(sed -e '/^#/d' -e 's/^\(hugepages=[0-9]* \)*//' "$top"/guest/run/vmselftests*.list |
	   sed -n 's/^\([a-z0-9_-][a-z0-9_-]*\).*/\1/p' | sort -u); do
	bin=$out/vm-$t
	c=$vm/$t.c
	if [ ! -x "$bin" ] || [ "$c" -nt "$bin" ] || [ "$0" -nt "$bin" ]; then
		extra=() libs=()
		grep -q '"vm_util.h"' "$c" && extra=("$vm/vm_util.c")
		if grep -q '<numa.h>' "$c"; then
			if [ ! -f /usr/include/numa.h ] || [ ! -f /usr/lib/x86_64-linux-gnu/libnuma.a ]; then
				echo "pfscale: selftest $t needs libnuma-dev (numa.h, libnuma.a)" >&2
				exit 1
			fi
			libs=(-lnuma)
		fi
		case $t in
		migration) migration_edit "$c" "$out/$t.c"; c=$out/$t.c ;;
		soft-dirty) soft_dirty_edit "$c" "$out/$t.c"; c=$out/$t.c ;;
		khugepaged) khugepaged_edit "$c" "$out/$t.c"; c=$out/$t.c ;;
		esac
		# -include sys/syscall.h: the selftests get __NR_* from the
		# kernel's headers in their own build; without it mrelease_test
		# falls back to "#define __NR_process_mrelease -1" and skips.
		# -I"$vm": the quoted includes of a copy made above. libnuma's
		# affinity.o makes ld warn about getaddrinfo in a static binary
		# (numa_affinity(), which no selftest calls): filtered.
		gcc -static -O2 -w -pthread -include sys/syscall.h -I"$vm" -I"$vm/.." -I"$src" \
			-I"$src/usr/include" -I"$src/tools/include/uapi" \
			-o "$bin" "$c" "${extra[@]}" -lrt "${libs[@]}" 2> "$out/$t.log" ||
			{ cat "$out/$t.log" >&2; echo "pfscale: building selftest $t failed" >&2; exit 1; }
		grep -v -e "getaddrinfo' in statically linked" -e 'libnuma.a(affinity.o)' \
			"$out/$t.log" >&2 || true
	fi
	echo "$bin"
done
