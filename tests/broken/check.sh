#!/bin/bash
# Build one deliberately broken variant of the test kernel and run guest
# tests on it, on the atomic path, with and without widened race windows.
#
#   tests/broken/check.sh NAME [US]
#   tests/broken/check.sh --list
#
# NAME: tests/broken/NAME.diff, with its line in tests/broken/variants: the
# guest tests to boot and the check meant to catch it. US: the
# race_window_us of the widened boot (default 50). Needs the test kernel
# built (make kernel-test) and build/initramfs.cpio. The diff is applied to
# the test kernel's tree and built in its object directory (one file and a
# link), then reverted; the next kernel build recompiles that file.
# Prints each boot's TAP failures; exits 0 if a boot failed the check meant
# for the variant (a failed check matching its EXPECT), i.e. the variant was
# caught by that check, and the same check passed on the unbroken kernel on
# the same path (the negative control, below); 1 if not; 2 on a usage error. Either boot: widening
# slows the racers too (a NUMA hinting scan's window is met more often by
# the plain boot's faster writers). The
# last line names the variant and the check. --list: every variant's name,
# one a line. The only reader of tests/broken/variants.
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/../../scripts/common.sh"

usage() { echo "usage: check.sh NAME [US] | --list (NAME: a line of tests/broken/variants)" >&2; exit 2; }
top=$PFSCALE_TOP
variants=$top/tests/broken/variants
# NAME TESTS EXPECT lines, comments and blank lines apart.
entries() { grep -Ev '^[[:space:]]*(#|$)' "$variants"; }
if [ "${1:-}" = --list ]; then
	[ $# = 1 ] || usage
	entries | while read -r name _; do echo "$name"; done
	exit 0
fi
name=${1:-}
us=${2:-50}
[ -n "$name" ] && [ $# -le 2 ] || usage
[[ "$us" =~ ^[0-9]+$ ]] || usage
diff=$top/tests/broken/$name.diff
[ -f "$diff" ] || die "no $diff"
line=$(entries | grep -E "^$name ") || die "$name has no line in $variants"
read -r _ tests expect <<<"$line"
[ -n "$expect" ] || die "$name: no TESTS and EXPECT in $variants"
art=$(cat "$top/build/kernel-test.path" 2>/dev/null) || die "no test kernel (make kernel-test)"
initrd=$top/build/initramfs.cpio
[ -f "$initrd" ] || die "no $initrd (make initramfs)"
src=$(cat "$art/source")
obj=${src%/src-*}/build-${src##*/src-}-test
out=$top/build/broken
mkdir -p "$out"

exec 9>"$PFSCALE_CACHE/build.lock"
flock 9
files=$(git -C "$src" apply --numstat "$diff" | cut -f3)
git -C "$src" apply "$diff" || die "$name.diff does not apply to $src"
# shellcheck disable=SC2086 # one word per file the diff touches
revert() { (cd "$src" && git checkout -q -- $files); }
trap revert EXIT
note "building $name in $obj"
make -s -C "$src" O="$obj" -j"$(nproc)" CC="ccache gcc" bzImage >/dev/null ||
	die "$name does not build"
cp "$obj/arch/x86/boot/bzImage" "$out/$name.bzImage"
# qemu/boot.sh reads the config next to the kernel (numa=fake=2 where the
# kernel has NUMA_EMU): every variant has the test kernel's.
cp "$obj/.config" "$out/.config"
revert
trap - EXIT
flock -u 9

caught=
for mode in plain widened; do
	args="pfscale.test=$tests pfscale.atomic_pte=1"
	[ $mode = widened ] && args="$args pfscale.race_window_us=$us"
	log=$out/$name-$mode.log
	"$top/qemu/boot.sh" -q -k "$out/$name.bzImage" -i "$initrd" -c 4 -t 900 \
		-r one -a "$args" -l "$log" >/dev/null
	fails=$(grep -c '^not ok' "$log")
	meant=$(grep '^not ok' "$log" | grep -cE -- "$expect")
	echo "$name, $mode ($args): $fails failed checks, $meant of them the check meant for it"
	grep '^not ok' "$log" | head -5
	[ "$meant" != 0 ] && [ -z "$caught" ] && caught=$mode caught_args=$args
done
if [ -z "$caught" ]; then
	echo "$name: NOT caught by the check meant for it (/$expect/)"
	exit 1
fi

# The negative control: the check meant for the variant passes on the
# unbroken kernel on the same path (the atomic one; widened or not), or a
# failure of it says nothing about the variant. PFSCALE_BROKEN_CONTROL=DIR:
# a make test output directory whose atomic-console.log and
# widened-console.log (the same path and race_window_us) serve as the
# control; otherwise the unbroken test kernel is booted with the same
# arguments.
control_log=${PFSCALE_BROKEN_CONTROL:+$PFSCALE_BROKEN_CONTROL/$([ "$caught" = plain ] && echo atomic || echo widened)-console.log}
# (a log of that run: newer than its start stamp, tests/run.sh)
if [ -z "$control_log" ] || ! [ "$control_log" -nt "$PFSCALE_BROKEN_CONTROL/.run-start" ]; then
	control_log=$out/$name-control-$caught.log
	"$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 4 -t 900 \
		-r one -a "$caught_args" -l "$control_log" >/dev/null
fi
passed=$(grep '^ok ' "$control_log" | grep -cE -- "$expect")
failed=$(grep '^not ok' "$control_log" | grep -cE -- "$expect")
echo "$name, control: the unbroken kernel ($caught, $control_log): the check meant for it passed $passed times, failed $failed"
if [ "$passed" = 0 ] || [ "$failed" != 0 ]; then
	echo "$name: the check meant for it does not pass on the unbroken kernel (/$expect/): no catch"
	exit 1
fi
echo "$name: caught by the check meant for it (/$expect/), which passes on the unbroken kernel"
