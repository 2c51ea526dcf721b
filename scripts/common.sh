# Shared settings for the pfscale harness scripts (sourced, not run).
# shellcheck shell=bash

PFSCALE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PFSCALE_CACHE=${PFSCALE_CACHE:-$HOME/.cache/pfscale}
# The kernel line to build: 6.1 (the default, the series' base) or 6.12
# (Debian's linux-source-6.12; unpatched flavours only, no series yet).
# make passes KERNEL=... as PFSCALE_KERNEL.
PFSCALE_KERNEL=${PFSCALE_KERNEL:-6.1}
case "$PFSCALE_KERNEL" in
6.1|6.12) ;;
*) echo "pfscale: unknown kernel '$PFSCALE_KERNEL' (KERNEL=6.1 or 6.12)" >&2; exit 1 ;;
esac
PFSCALE_SRC_TARBALL=${PFSCALE_SRC_TARBALL:-/usr/src/linux-source-$PFSCALE_KERNEL.tar.xz}

die() { echo "pfscale: $*" >&2; exit 1; }

# git for the kernel trees in the cache (their commits need an identity).
# shellcheck disable=SC2034 # used by the scripts that source this file
gitc=(git -c user.name=pfscale -c user.email=pfscale@localhost -c advice.detachedHead=false)
# The kernel builds' compiler: gcc, through ccache when it is installed.
# shellcheck disable=SC2034
kernel_cc=gcc
# shellcheck disable=SC2034
command -v ccache >/dev/null && kernel_cc="ccache gcc"

# Stop a qemu/boot.sh started in the background and reap it. boot.sh runs
# QEMU under timeout(1), which forwards TERM to QEMU.
stop_boot() {
	local c
	for c in $(pgrep -P "$1"); do kill "$c" 2>/dev/null; done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
note() { echo "pfscale: $*" >&2; }

linux_source_version() {
	dpkg-query -W -f '${Version}' "linux-source-$PFSCALE_KERNEL" 2>/dev/null ||
		die "linux-source-$PFSCALE_KERNEL is not installed (run: make deps KERNEL=$PFSCALE_KERNEL)"
}

# The config fragments of a flavour, in merge order: base, then each part of
# a flavour name like "test" or "test+kasan". The part "unpatched" is not a
# fragment: it means the pristine tree, without the series. Last, for a
# kernel other than 6.1, that kernel's delta (kconfig/6.12.config): what
# the shared fragments say that its Kconfig spells differently. 6.1 has no
# delta, so its fragments, and its kernel keys, are those of before.
flavour_fragments() {
	local part
	echo "$PFSCALE_TOP/kconfig/base.config"
	for part in ${1//+/ }; do
		[ "$part" = unpatched ] || echo "$PFSCALE_TOP/kconfig/$part.config"
	done
	[ "$PFSCALE_KERNEL" = 6.1 ] || echo "$PFSCALE_TOP/kconfig/$PFSCALE_KERNEL.config"
}

flavour_unpatched() { [[ "+$1+" == *+unpatched+* ]]; }

# Hash of everything that decides what kernel we build for a flavour:
# the linux-source version, the series and its patches, the config fragments.
kernel_key() {
	local flavour=$1 ver
	ver=$(linux_source_version)
	{
		echo "$ver $flavour"
		if ! flavour_unpatched "$flavour"; then
			cat "$PFSCALE_TOP/patches/series"
			while read -r p; do
				case "$p" in ''|\#*) continue ;; esac
				cat "$PFSCALE_TOP/patches/$p"
			done < "$PFSCALE_TOP/patches/series"
		fi
		# shellcheck disable=SC2046
		cat $(flavour_fragments "$flavour")
		# the artifact's pfscale-layout
		cat "$PFSCALE_TOP/scripts/layout.def" "$PFSCALE_TOP/scripts/layout.c" "$PFSCALE_TOP/scripts/layout.sh"
	} | sha256sum | cut -c1-12
}

artifact_dir() {
	echo "$PFSCALE_CACHE/artifacts/$(linux_source_version)-$1-$(kernel_key "$1")"
}
