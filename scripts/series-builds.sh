#!/bin/bash
# Every prefix of the series builds (make series-builds): patch after patch
# applied to pristine in a worktree of its own, series-VER/, each followed
# by an incremental build of the test kernel's vmlinux in
# build-VER-series/ (the test flavour's config; options a later patch
# adds are dropped by olddefconfig until it is there). A patch that uses
# what only a later one adds fails here, named, with the build's errors.
#
#   scripts/series-builds.sh
#
# stdout: one TAP line per patch ("ok - series-builds: NNNN-... builds on
# the ones before it (N s, W warnings)"), a plan first; stderr: progress.
# Under $PFSCALE_CACHE/build.lock like every kernel build. Not in make
# test: one build per patch (about a minute each with a warm ccache,
# more after a change to a widely included header).
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
unset MAKEFLAGS MAKELEVEL MFLAGS

ver=$(linux_source_version)
src=$PFSCALE_CACHE/src-$ver
wt=$PFSCALE_CACHE/series-$ver
obj=$PFSCALE_CACHE/build-$ver-series

# The test flavour's config, as scripts/kernel.sh makes it.
art=$("$PFSCALE_TOP/scripts/kernel.sh" test) || die "could not build the test kernel"
[ -d "$src/.git" ] || die "no $src (scripts/kernel.sh makes it)"
mapfile -t patches < <(grep -v -e '^#' -e '^$' "$PFSCALE_TOP/patches/series")

exec 9>"$PFSCALE_CACHE/build.lock"
flock 9
if [ ! -d "$wt" ]; then
	"${gitc[@]}" -C "$src" worktree prune
	"${gitc[@]}" -C "$src" worktree add -q --detach "$wt" pristine || die "worktree $wt"
fi
"${gitc[@]}" -C "$wt" am --abort >/dev/null 2>&1
"${gitc[@]}" -C "$wt" checkout -q -f --detach pristine || die "checkout pristine in $wt"
mkdir -p "$obj"

echo "1..${#patches[@]}"
rc=0
for p in "${patches[@]}"; do
	if ! "${gitc[@]}" -C "$wt" am -q --whitespace=nowarn "$PFSCALE_TOP/patches/$p" 2>"$obj/am.err"; then
		echo "not ok - series-builds: $p applies to the ones before it: $(head -1 "$obj/am.err")"
		rc=1
		break
	fi
	cp "$art/.config" "$obj/.config"
	start=$(date +%s)
	note "series-builds: building with $p"
	if make -s -C "$wt" O="$obj" CC="$kernel_cc" olddefconfig >/dev/null 2>"$obj/build.err" &&
		make -s -C "$wt" O="$obj" -j"$(nproc)" CC="$kernel_cc" vmlinux >/dev/null 2>>"$obj/build.err"; then
		echo "ok - series-builds: $p builds on the ones before it ($(($(date +%s) - start)) s, $(grep -c 'warning:' "$obj/build.err") warnings)"
		grep 'warning:' "$obj/build.err" | head -5 | sed 's/^/# /'
	else
		echo "not ok - series-builds: $p builds on the ones before it:"
		grep -m 10 -E 'error|Error' "$obj/build.err" | sed 's/^/# /'
		rc=1
	fi
done
exit $rc
