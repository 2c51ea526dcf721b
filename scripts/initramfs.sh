#!/bin/bash
# Build the guest initramfs (uncompressed newc cpio) from busybox-static,
# guest/init, guest/run/*, guest/lib/* and the static guest programs given
# as arguments.
#
#   scripts/initramfs.sh OUT.cpio [PROGRAM...]
#
# GUEST_HOST_TOOLS (environment): Debian tools copied in with their shared
# libraries (make passes trace-cmd).
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"

out=${1:?usage: initramfs.sh OUT.cpio [PROGRAM...]}
shift
busybox=/bin/busybox
[ -x "$busybox" ] && file -L "$busybox" | grep -q 'statically linked' ||
	die "$busybox is not busybox-static (run: make deps)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen="$work/gen_init_cpio"
# The kernel's own cpio writer: device nodes without needing root.
src=$PFSCALE_CACHE/src-$(linux_source_version)
[ -f "$src/usr/gen_init_cpio.c" ] || die "kernel tree not unpacked yet (run: make kernel)"
gcc -O2 -o "$gen" "$src/usr/gen_init_cpio.c"

spec=$work/spec
{
	for d in /bin /sbin /usr /usr/bin /usr/sbin /proc /sys /dev /tmp /etc /pfscale \
		/pfscale/bin /pfscale/run /pfscale/lib /root; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /bin/busybox $busybox 0755 0 0"
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || echo "slink /bin/$applet busybox 0777 0 0"
	done
	echo "file /init $PFSCALE_TOP/guest/init 0755 0 0"
	for r in "$PFSCALE_TOP"/guest/run/*; do
		echo "file /pfscale/run/$(basename "$r") $r 0755 0 0"
	done
	# Sourced by the run scripts, not run: not in /pfscale/run.
	for l in "$PFSCALE_TOP"/guest/lib/*; do
		echo "file /pfscale/lib/$(basename "$l") $l 0644 0 0"
	done
	for p in "$@"; do
		echo "file /pfscale/bin/$(basename "$p") $p 0755 0 0"
	done
	# Debian's dynamically linked tools the guest uses (GUEST_HOST_TOOLS),
	# with the shared libraries ldd finds for them, at the same paths.
	made=" /bin /sbin /usr /usr/bin /usr/sbin " copied=" "
	for tool in ${GUEST_HOST_TOOLS:-}; do
		bin=$(command -v "$tool") || die "$tool is not installed (run: make deps)"
		echo "file /usr/bin/$tool $bin 0755 0 0"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			dir=
			for d in $(dirname "$lib" | tr / ' '); do
				dir=$dir/$d
				case "$made" in *" $dir "*) continue ;; esac
				echo "dir $dir 0755 0 0"
				made="$made$dir "
			done
			case "$copied" in *" $lib "*) continue ;; esac
			echo "file $lib $(readlink -f "$lib") 0755 0 0"
			copied="$copied$lib "
		done
	done
} > "$spec"
"$gen" "$spec" > "$out.tmp"
mv "$out.tmp" "$out"
