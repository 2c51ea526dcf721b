#!/bin/bash
# make check, the everyday loop: one boot of the test kernel (tests/run.sh
# -p check: the race tests widened on the atomic path, then on the stock
# path switched at run time, with a third of their fixed times) and the
# host unit tests (the runner's parser, the gdb helpers' decoding, the
# golden vectors of both debuggers' decode rules, the bench report). The
# debugger tests (gdb, crash, vmcore: a boot and a dump each,
# and the unpatched kernel for their "no pfscale patches" messages) and
# the series' checkpatch run too when their files changed since the last
# make check that passed (a checksum in OUT). make test runs everything.
#
#   scripts/check.sh KERNEL_ARTIFACT INITRAMFS CPUS MB OUT
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
set -uo pipefail
art=${1:?usage: check.sh ART INITRAMFS CPUS MB OUT} initrd=${2:?} cpus=${3:?} mem=${4:?} out=${5:?}
cd "$PFSCALE_TOP" || exit 1
mkdir -p "$out"
hosts="runner decode vectors bench-report"
# changed NAME PATH...: does the checksum of what NAME's host tests read
# differ from the one the last make check that passed recorded?
declare -A sums
changed() {
	local name=$1 sum
	shift
	sum=$(find "$@" -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha1sum | sha1sum | cut -c1-40)
	sums[$name]=$sum
	[ "$(cat "$out/.$name.sum" 2>/dev/null)" != "$sum" ]
}
stock_art=
if changed debuggers gdb-scripts crash lib tests/host/gdb.sh tests/host/gdb_*.py \
	tests/host/crash.sh tests/host/harness-oops.gdb patches scripts/layout.def scripts/layout.c \
	scripts/layout.sh; then
	note "check: the debugger tests' files changed since the last make check that passed: running gdb and crash too"
	hosts="$hosts gdb crash"
	make -s kernel-test+unpatched >/dev/null || die "could not build the unpatched kernel"
	stock_art=$(cat build/kernel-test+unpatched.path)
fi
if changed vmcore crash lib guest/run/vmcore tests/guest/h_race_loop.c tests/host/vmcore.sh; then
	note "check: make vmcore's files changed since the last make check that passed: its test too"
	hosts="$hosts vmcore"
fi
if changed patches patches; then
	note "check: patches/ changed since the last make check that passed: checkpatch too"
	hosts="$hosts patches"
fi
PFSCALE_STOCK_ART=$stock_art PFSCALE_HOST_TESTS=$hosts \
	tests/run.sh -p check -k "$art" -i "$initrd" -c "$cpus" -m "$mem" -o "$out"
rc=$?
if [ $rc = 0 ]; then
	for name in "${!sums[@]}"; do
		echo "${sums[$name]}" > "$out/.$name.sum"
	done
fi
exit $rc
