#!/bin/bash
# Build (or reuse) the pfscale kernel for one flavour and print its artifact dir.
#
#   scripts/kernel.sh test|perf|test+kasan|test+unpatched
#   PFSCALE_KERNEL=6.12 scripts/kernel.sh test+unpatched|perf+unpatched
#
# PFSCALE_KERNEL (make's KERNEL) picks linux-source-6.1 (default) or
# linux-source-6.12; 6.12 has no series yet, so only its unpatched flavours
# build, with kconfig/6.12.config merged last.
#
# test+unpatched is the pristine tree with the test config minus the pfscale
# options: the "kernel without the patch" that the debugger tests need. It is
# built in its own worktree, pristine-VER/, so that the patched tree's files
# never change back and forth.
#
# Layout under $PFSCALE_CACHE (default ~/.cache/pfscale):
#   src-VER/          linux-source VER unpacked, a git repo whose tag
#                     `pristine` is the tarball; HEAD is the applied series
#   am-VER/           worktree where the series is applied with `git am`
#   build-VER-FLAV/   the O= object directory of one flavour (incremental)
#   artifacts/VER-FLAV-KEY/  bzImage, vmlinux, .config, the gdb scripts and
#                     pfscale-layout (scripts/layout.sh) of one (version,
#                     patches + config) key; reused as is
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"

flavour=${1:?usage: kernel.sh test|perf|test+kasan|test+unpatched}
mapfile -t fragments < <(flavour_fragments "$flavour")
for f in "${fragments[@]}"; do
	[ -f "$f" ] || die "unknown flavour '$flavour' (no ${f#"$PFSCALE_TOP"/})"
done
unset MAKEFLAGS MAKELEVEL MFLAGS
if [ "$PFSCALE_KERNEL" != 6.1 ] && ! flavour_unpatched "$flavour"; then
	die "no series for $PFSCALE_KERNEL yet: only unpatched flavours build there (e.g. test+unpatched)"
fi

ver=$(linux_source_version)
key=$(kernel_key "$flavour")
art=$PFSCALE_CACHE/artifacts/$ver-$flavour-$key
if [ -f "$art/done" ]; then
	echo "$art"
	exit 0
fi

mkdir -p "$PFSCALE_CACHE/artifacts"
# One kernel build at a time on this machine (2 cores), across clones.
exec 9>"$PFSCALE_CACHE/build.lock"
flock 9
if [ -f "$art/done" ]; then
	echo "$art"
	exit 0
fi

src=$PFSCALE_CACHE/src-$ver
am=$PFSCALE_CACHE/am-$ver
obj=$PFSCALE_CACHE/build-$ver-$flavour

if [ ! -d "$src/.git" ]; then
	note "unpacking $PFSCALE_SRC_TARBALL into $src"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$PFSCALE_SRC_TARBALL"
	# Debian's top-level .gitignore ignores everything: add with -f.
	(cd "$src.tmp" && "${gitc[@]}" init -q && "${gitc[@]}" add -f -A . &&
		"${gitc[@]}" commit -q -m "linux-source-$PFSCALE_KERNEL $ver (pristine)" &&
		"${gitc[@]}" tag pristine)
	mv "$src.tmp" "$src"
fi

tree=$src
if flavour_unpatched "$flavour"; then
	tree=$PFSCALE_CACHE/pristine-$ver
	if [ ! -d "$tree" ]; then
		"${gitc[@]}" -C "$src" worktree prune
		"${gitc[@]}" -C "$src" worktree add -q --detach "$tree" pristine
	fi
	"${gitc[@]}" -C "$tree" checkout -q -f --detach pristine
	target=$("${gitc[@]}" -C "$tree" rev-parse HEAD)
	# The pfscale options do not exist there.
	mkdir -p "$obj/.fragments"
	for i in "${!fragments[@]}"; do
		f=$obj/.fragments/$i-$(basename "${fragments[$i]}")
		grep -v '^CONFIG_PFSCALE_' "${fragments[$i]}" > "$f"
		fragments[$i]=$f
	done
# Apply the series on the pristine commit in a separate worktree, then move
# the build tree to the result: git rewrites only files whose content changed,
# so unchanged files keep their mtimes and the build stays incremental.
elif [ ! -d "$am" ]; then
	"${gitc[@]}" -C "$src" worktree prune
	"${gitc[@]}" -C "$src" worktree add -q --detach "$am" pristine
fi
if ! flavour_unpatched "$flavour"; then
	"${gitc[@]}" -C "$am" am --abort >/dev/null 2>&1 || true
	"${gitc[@]}" -C "$am" checkout -q -f --detach pristine
	while read -r p; do
		case "$p" in ''|\#*) continue ;; esac
		"${gitc[@]}" -C "$am" am -q --whitespace=nowarn "$PFSCALE_TOP/patches/$p" ||
			die "patches/$p does not apply to linux-source $ver"
	done < "$PFSCALE_TOP/patches/series"
	target=$("${gitc[@]}" -C "$am" rev-parse HEAD)
	"${gitc[@]}" -C "$src" checkout -q -f --detach "$target"
fi

# Configure: tinyconfig + base fragment + flavour fragment.
mkdir -p "$obj"
cfgkey=$(cat "${fragments[@]}" | sha256sum | cut -c1-12)
if [ "$(cat "$obj/.pfscale-config" 2>/dev/null)" != "$cfgkey-$target" ]; then
	make -s -C "$tree" O="$obj" tinyconfig >/dev/null
	(cd "$tree" && KCONFIG_CONFIG="$obj/.config" scripts/kconfig/merge_config.sh -m -O "$obj" \
		"$obj/.config" "${fragments[@]}" >/dev/null)
	make -s -C "$tree" O="$obj" olddefconfig >/dev/null
	# A fragment line that Kconfig dropped (unmet dependency, or a symbol
	# this kernel does not have) is a bug here. Only each symbol's last
	# line counts, as in merge_config.sh: a later fragment (a kernel's
	# delta, kconfig/6.12.config) may override an earlier one.
	missing=$(cat "${fragments[@]}" |
		awk 'match($0, /^CONFIG_[A-Za-z0-9_]+=/) { s = substr($0, 1, RLENGTH - 1); last[s] = $0; if (!(s in seen)) { seen[s] = 1; order[++n] = s }; next }
			/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { last[$2] = ""; next }
			END { for (i = 1; i <= n; i++) if (last[order[i]] != "") print last[order[i]] }' |
		while read -r line; do
			grep -qxF "$line" "$obj/.config" || echo "$line"
		done)
	[ -z "$missing" ] || die "config fragment lines not honoured by Kconfig:\n$missing"
	echo "$cfgkey-$target" > "$obj/.pfscale-config"
fi

note "building $flavour kernel ($ver, key $key) in $obj"
start=$(date +%s)
make -s -C "$tree" O="$obj" -j"$(nproc)" CC="$kernel_cc" KBUILD_BUILD_TIMESTAMP="2004-12-01 00:00 UTC" \
	KBUILD_BUILD_USER=pfscale KBUILD_BUILD_HOST=pfscale bzImage scripts_gdb
note "kernel build took $(( $(date +%s) - start ))s"

rm -rf "$art.tmp"
mkdir -p "$art.tmp"
cp "$obj/arch/x86/boot/bzImage" "$obj/vmlinux" "$obj/System.map" "$obj/.config" "$art.tmp/"
cp -L "$obj/vmlinux-gdb.py" "$art.tmp/"
mkdir -p "$art.tmp/scripts"
cp -rL "$obj/scripts/gdb" "$art.tmp/scripts/"
# The #defines the debugger readers decode with, from this very build.
if [ "$PFSCALE_KERNEL" = 6.1 ]; then
	"$PFSCALE_TOP/scripts/layout.sh" "$obj" > "$art.tmp/pfscale-layout"
# Not yet on 6.12 (issue 27, readers): kbuild 6.3+ saves "savedcmd_" lines
# in .rwsem.o.cmd, and SWP_SWAPIN_ERROR_NUM, REQUIRED in layout.def, is
# gone. Changing layout.sh or layout.def changes every 6.1 kernel key, so
# 6.12 artifacts ship without the file for now; the readers' commands
# that need it say so in one line.
elif ! "$PFSCALE_TOP/scripts/layout.sh" "$obj" > "$art.tmp/pfscale-layout" 2> "$art.tmp/pfscale-layout.err"; then
	note "no pfscale-layout for $PFSCALE_KERNEL: $(tail -n 1 "$art.tmp/pfscale-layout.err")"
	rm -f "$art.tmp/pfscale-layout"
fi
echo "$target" > "$art.tmp/commit"
echo "$tree" > "$art.tmp/source"
rm -rf "$art"
mv "$art.tmp" "$art"
touch "$art/done"
# Keep the newest few artifact dirs per kernel version and flavour.
ls -1dt "$PFSCALE_CACHE/artifacts/$ver-$flavour"-* 2>/dev/null | tail -n +5 | xargs -r rm -rf
echo "$art"
