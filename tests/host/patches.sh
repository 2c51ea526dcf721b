#!/bin/bash
# Every patch in patches/series is clean under checkpatch.pl --strict and
# applies to the pristine linux-source tree in series order.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/common.sh
. "$top/scripts/common.sh"
# Two checks per patch.
echo "1..$(($(grep -cv -e '^#' -e '^$' "$top/patches/series") * 2))"
src=$(cat "$PFSCALE_ART/source")
tmp=$(mktemp -d)
trap 'git -C "$src" worktree remove --force "$tmp/wt" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
git -C "$src" worktree add -q --detach "$tmp/wt" pristine >/dev/null 2>&1
while read -r p; do
	case "$p" in ''|\#*) continue ;; esac
	# Debian's python3 (with python3-ply for spdxcheck), not a user-local one.
	out=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict -q "$top/patches/$p" 2>&1)
	if [ -z "$out" ]; then
		echo "ok - patches: $p is checkpatch --strict clean"
	else
		echo "$out" | head -20
		echo "not ok - patches: $p is checkpatch --strict clean"
	fi
	if git -C "$tmp/wt" apply --index "$top/patches/$p" 2>"$tmp/err"; then
		echo "ok - patches: $p applies in series order to pristine linux-source"
	else
		cat "$tmp/err"
		echo "not ok - patches: $p applies in series order to pristine linux-source"
	fi
done < "$top/patches/series"
