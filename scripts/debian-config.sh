#!/bin/bash
# Debian's own kernel config, checked against the series (make debian-config).
#
#   scripts/debian-config.sh
#
# 1. Takes Debian's config.amd64_none_amd64.xz (package linux-config-6.1).
# 2. Applies the series to pristine in a worktree of its own, debian-VER/
#    (src-VER, am-VER and pristine-VER belong to scripts/kernel.sh).
# 3. Adds CONFIG_PFSCALE_STATS=y and CONFIG_PFSCALE_ATOMIC_PTE=y to that
#    config in build-VER-debian/, runs olddefconfig, and fails unless both
#    survived, naming the Kconfig dependency that dropped one.
# 4. Compiles the .c files under mm/, arch/x86/ and fs/proc/ that the
#    series' diffs touch, as single objects, and fails on any warning.
#
# Everything that compiles runs under $PFSCALE_CACHE/build.lock, like
# scripts/kernel.sh. The verdict is cached under a key of the linux-source
# version, the series, Debian's config, the compiler and this script: a run
# with the same key replays it without the lock.
#
# stdout: one "debian-config: ..." line per result (tests/host/debian-config.sh
# reads them); stderr: progress and diagnostics.
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"

debian_config=${PFSCALE_DEBIAN_CONFIG:-/usr/src/linux-config-6.1/config.amd64_none_amd64.xz}
[ -f "$debian_config" ] || die "no $debian_config (package linux-config-6.1; run: make deps)"
unset MAKEFLAGS MAKELEVEL MFLAGS
[ "$PFSCALE_KERNEL" = 6.1 ] || die "debian-config checks the 6.1 series only (KERNEL=$PFSCALE_KERNEL)"

ver=$(linux_source_version)
cfgver=$(dpkg-query -W -f '${Version}' linux-config-6.1 2>/dev/null || echo unknown)
src=$PFSCALE_CACHE/src-$ver
wt=$PFSCALE_CACHE/debian-$ver
obj=$PFSCALE_CACHE/build-$ver-debian
want=(CONFIG_PFSCALE_STATS CONFIG_PFSCALE_ATOMIC_PTE)

series_files() {
	local p
	echo "$PFSCALE_TOP/patches/series"
	while read -r p; do
		case "$p" in ''|\#*) continue ;; esac
		echo "$PFSCALE_TOP/patches/$p"
	done < "$PFSCALE_TOP/patches/series"
}
mapfile -t series < <(series_files)
series_key=$(cat "${series[@]}" | sha256sum | cut -c1-12)
key=$({
	echo "$ver $cfgver"
	echo "$series_key"
	xzcat "$debian_config"
	gcc --version | head -1
	cat "$0"
} | sha256sum | cut -c1-12)

stamp=$obj/.pfscale-debian-stamp
report=$obj/.pfscale-debian-report

# A verdict for this key: replay it (stderr part, then the result lines).
replay() {
	[ "$(head -1 "$stamp" 2>/dev/null)" = "$key" ] || return 0
	note "debian-config: cached verdict for key $key (patches, Debian's config, compiler and script unchanged)"
	grep -v '^debian-config: ' "$report" >&2 || true
	grep '^debian-config: ' "$report" || true
	exit "$(sed -n 2p "$stamp")"
}
replay

# Output that is part of the verdict goes to the report too.
say() { note "$*"; echo "pfscale: $*" >> "$report.tmp"; }
result() { echo "debian-config: $*"; echo "debian-config: $*" >> "$report.tmp"; }
# Record the verdict (exit status $1) for this key and exit with it.
verdict() {
	mv "$report.tmp" "$report"
	printf '%s\n%s\n' "$key" "$1" > "$stamp"
	exit "$1"
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

mkdir -p "$PFSCALE_CACHE" "$obj"
exec 9>"$PFSCALE_CACHE/build.lock"
lock_start=$(date +%s.%N)
if ! flock -n 9; then
	note "waiting for the kernel build lock ($PFSCALE_CACHE/build.lock): another build is running"
	flock 9
fi
lock_wait=$(secs "$lock_start" "$(date +%s.%N)")
replay
rm -f "$report.tmp"

# The unpacked tree, as scripts/kernel.sh makes it (same layout, same tag).
if [ ! -d "$src/.git" ]; then
	note "unpacking $PFSCALE_SRC_TARBALL into $src"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$PFSCALE_SRC_TARBALL"
	(cd "$src.tmp" && "${gitc[@]}" init -q && "${gitc[@]}" add -f -A . &&
		"${gitc[@]}" commit -q -m "linux-source-6.1 $ver (pristine)" &&
		"${gitc[@]}" tag pristine)
	mv "$src.tmp" "$src"
fi

# 2. The series on pristine, in our own worktree; applied again only when
# the series changed (so that unchanged files keep their mtimes).
if [ ! -d "$wt" ]; then
	note "creating worktree $wt"
	"${gitc[@]}" -C "$src" worktree prune
	"${gitc[@]}" -C "$src" worktree add -q --detach "$wt" pristine
fi
applied=$obj/.pfscale-debian-applied
if [ "$(cat "$applied" 2>/dev/null)" != "$series_key $("${gitc[@]}" -C "$wt" rev-parse HEAD)" ]; then
	note "applying the series in $wt"
	"${gitc[@]}" -C "$wt" am --abort >/dev/null 2>&1 || true
	"${gitc[@]}" -C "$wt" checkout -q -f --detach pristine
	for p in "${series[@]:1}"; do
		"${gitc[@]}" -C "$wt" am -q --whitespace=nowarn "$p" ||
			die "patches/${p##*/} does not apply to linux-source $ver"
	done
	echo "$series_key $("${gitc[@]}" -C "$wt" rev-parse HEAD)" > "$applied"
fi

# 3. Debian's config + the pfscale options.
#
# Neutralised, because they name files of Debian's own build that
# linux-source does not ship or that only Debian has:
# - CONFIG_SYSTEM_TRUSTED_KEYS, CONFIG_SYSTEM_REVOCATION_KEYS: certificates
#   under debian/certs/ in Debian's build; certs/ would fail to find them.
#   Empty: no built-in trusted or revoked keys.
# - CONFIG_MODULE_SIG_KEY: Debian signs with a key it keeps outside the
#   tree. The kernel default certs/signing_key.pem is generated on demand,
#   and only by a certs/ or modules build, which this check never runs.
# The config.amd64_none_amd64 of linux-config-6.1 6.1.192-3 sets none of
# these three (it has no line for them at all), so today these lines only
# guard against a config that does; olddefconfig gives them the same values.
# Nothing else in Debian's config stops olddefconfig or prepare here: the
# symbols olddefconfig changes are listed in $obj/debian-config.changes.
config_start=$(date +%s.%N)
xzcat "$debian_config" > "$obj/debian.config"
{
	grep -vE '^(# )?(CONFIG_PFSCALE_[A-Z0-9_]*|CONFIG_SYSTEM_TRUSTED_KEYS|CONFIG_SYSTEM_REVOCATION_KEYS|CONFIG_MODULE_SIG_KEY)[= ]' \
		"$obj/debian.config"
	echo 'CONFIG_SYSTEM_TRUSTED_KEYS=""'
	echo 'CONFIG_SYSTEM_REVOCATION_KEYS=""'
	echo 'CONFIG_MODULE_SIG_KEY="certs/signing_key.pem"'
	for s in "${want[@]}"; do echo "$s=y"; done
} > "$obj/.config"
make -s -C "$wt" O="$obj" CC="$kernel_cc" olddefconfig >/dev/null
"$wt/scripts/diffconfig" "$obj/debian.config" "$obj/.config" > "$obj/debian-config.changes" || true
say "olddefconfig on Debian's config ($cfgver) took $(secs "$config_start" "$(date +%s.%N)")s;" \
	"it changed $(grep -vc '^+PFSCALE_' "$obj/debian-config.changes") symbols besides the pfscale ones" \
	"($obj/debian-config.changes):"
grep -v '^+PFSCALE_' "$obj/debian-config.changes" | head -20 | while IFS= read -r l; do say "  $l"; done

# config_value SYM: SYM's value in the resulting .config (n if unset).
config_value() {
	local v
	v=$(grep -m1 "^CONFIG_$1=" "$obj/.config" | cut -d= -f2-) || true
	echo "${v:-n}"
}

# kconfig_block SYM: the lines of SYM's definition(s) in the patched tree.
kconfig_block() {
	"${gitc[@]}" -C "$wt" grep -l -E "^(menu)?config $1\$" -- '*Kconfig*' |
		while read -r f; do
			awk -v sym="$1" '
				/^(menu)?config / { inblk = ($2 == sym) }
				/^(choice|endchoice|menu|endmenu|if|endif|source|comment|mainmenu)( |$)/ { inblk = 0 }
				/^[ \t]+(---)?help(---)?[ \t]*$/ { inblk = 0 }
				inblk { print FILENAME ": " $0 }' "$wt/$f" | sed "s|^$wt/||"
		done
}

# why_set SYM: what makes SYM y in this config: the enabled symbols that
# select it, its def_bool (with the values of its terms), or else Debian's
# config choosing it.
why_set() {
	local sym=$1 f s def vals why=()
	while read -r f; do
		while read -r s; do
			[ "$(config_value "$s")" = n ] || why+=("selected by $s=$(config_value "$s")")
		done < <(awk -v sym="$sym" '
			/^(menu)?config / { cur = $2 }
			$1 == "select" && $2 == sym { print cur }' "$wt/$f")
	done < <("${gitc[@]}" -C "$wt" grep -l -E "^[[:space:]]+select $sym([[:space:]]|\$)" -- '*Kconfig*' || true)
	def=$(kconfig_block "$sym" | grep -m1 -E 'def_bool|def_tristate' |
		sed 's/^[^:]*:[[:space:]]*//' | tr -s ' \t' ' ') || true
	if [ -n "$def" ]; then
		vals=
		for s in $(echo "${def#def_* }" | grep -oE '[A-Za-z0-9_]+'); do
			vals+=" $s=$(config_value "$s")"
		done
		why+=("$def:$vals")
	fi
	# Chosen, not implied: Debian's config sets it.
	[ ${#why[@]} != 0 ] || ! grep -qx "CONFIG_$sym=[ym]" "$obj/debian.config" ||
		why+=("set in Debian's config")
	local IFS=$'\x1f'
	s="${why[*]}"
	echo "${s//$'\x1f'/; }"
}

# explain SYM: its "depends on" lines and the value of every symbol in them;
# in an expression of && terms only, the terms that fail are marked.
explain() {
	local sym=$1 line expr t name val blocked=() depends
	depends=$(kconfig_block "$sym" | grep -E ':[[:space:]]+depends on ') || true
	if [ -z "$depends" ]; then
		say "  config $sym has no \"depends on\" lines (an enclosing if/menu, or a choice, decides)"
		return
	fi
	while IFS= read -r line; do
		say "  ${line%%:*}: $(echo "${line#*:}" | tr -s ' \t' ' ' | sed 's/^ //')"
		expr=${line#*depends on}
		for t in $(echo "$expr" | grep -oE '!?[A-Za-z0-9_]+'); do
			name=${t#!}
			val=$(config_value "$name")
			if [[ "$expr" != *'||'* && "$expr" != *'('* ]] &&
				{ { [ "$t" != "$name" ] && [ "$val" != n ]; } ||
				  { [ "$t" = "$name" ] && [ "$val" = n ]; }; }; then
				blocked+=("$name=$val")
				say "    $name=$val  <- fails \"$t\"$(w=$(why_set "$name"); [ -z "$w" ] || echo " ($w)")"
			else
				say "    $name=$val"
			fi
		done
	done <<< "$depends"
	[ ${#blocked[@]} = 0 ] || echo "${blocked[*]}"
}

config_ok=0
for s in "${want[@]}"; do
	v=$(config_value "${s#CONFIG_}")
	if [ "$v" = y ]; then
		result "$s=y (survives olddefconfig on Debian's config)"
	else
		say "$s=y did not survive olddefconfig on Debian's config (now: $v); its dependencies:"
		# explain's lines go to stderr and the report; its stdout is the
		# failing terms.
		b=$(explain "${s#CONFIG_}" | tail -1)
		result "$s=$v (dropped by olddefconfig: ${b:-see above})"
		config_ok=1
	fi
done
if [ $config_ok != 0 ]; then
	say "FAIL: Debian's config drops the pfscale options; not compiling (fix the Kconfig dependencies first)"
	verdict 1
fi

# 4. The .c files the series touches, as single objects.
mapfile -t cfiles < <(cat "${series[@]:1}" |
	sed -n 's|^diff --git a/.* b/\(.*\)$|\1|p' |
	grep -E '^(mm|arch/x86|fs/proc)/.*\.c$' | sort -u |
	while read -r f; do [ -f "$wt/$f" ] && echo "$f"; done)
[ ${#cfiles[@]} -gt 0 ] || die "the series touches no .c file under mm/, arch/x86/ or fs/proc/"
objs=("${cfiles[@]/%.c/.o}")

prep_start=$(date +%s.%N)
note "make prepare (Debian's config) in $obj"
if ! make -C "$wt" O="$obj" -j2 CC="$kernel_cc" prepare > "$obj/debian-prepare.log" 2>&1; then
	tail -30 "$obj/debian-prepare.log" >&2
	die "make prepare failed with Debian's config ($obj/debian-prepare.log)"
fi
prep_time=$(secs "$prep_start" "$(date +%s.%N)")

# Removed first, so every object compiles now and prints its warnings
# (ccache replays them for an unchanged compile). -k: every object is tried,
# so one run reports all errors and warnings.
for o in "${objs[@]}"; do rm -f "$obj/$o"; done
note "compiling ${objs[*]}"
comp_start=$(date +%s.%N)
status=0
make -k -C "$wt" O="$obj" -j2 CC="$kernel_cc" "${objs[@]}" > "$obj/debian-compile.log" 2>&1 || status=$?
comp_time=$(secs "$comp_start" "$(date +%s.%N)")
warnings=$(grep -c 'warning:' "$obj/debian-compile.log") || true
errors=$(grep -c 'error:' "$obj/debian-compile.log") || true
failed=()
for o in "${objs[@]}"; do [ -f "$obj/$o" ] || failed+=("$o"); done
# The compiler's warnings and errors with their source lines, without
# kbuild's progress lines.
diagnostics() {
	grep -E -A3 'error:|warning:' "$obj/debian-compile.log" |
		grep -vE '^(--|  [A-Z]+ +[^ ]+)$' || true
}
times="time prepare ${prep_time}s, compile ${comp_time}s (-j2), lock wait ${lock_wait}s"
if [ $status != 0 ] || [ ${#failed[@]} != 0 ]; then
	# Compiler errors are part of the verdict (cached like it); a make
	# that failed without one (killed, disk full) is not.
	if [ "$errors" = 0 ]; then
		tail -30 "$obj/debian-compile.log" >&2
		die "make failed without a compiler error: ${failed[*]:-make exited $status} ($obj/debian-compile.log)"
	fi
	diagnostics | while IFS= read -r l; do say "  $l"; done
	result "objects ${#objs[@]}, ${#failed[@]} failed (${failed[*]}), $errors errors, $warnings warnings: ${objs[*]}"
	result "$times"
	say "FAIL: compiling with Debian's config failed: ${failed[*]} ($obj/debian-compile.log)"
	verdict 1
fi

if [ "$warnings" != 0 ]; then
	say "compiler warnings in the objects the series touches:"
	diagnostics | while IFS= read -r l; do say "  $l"; done
fi
result "objects ${#objs[@]} compiled, $warnings warnings: ${objs[*]}"
result "$times"
if [ "$warnings" != 0 ]; then
	say "FAIL: $warnings compiler warnings with Debian's config ($obj/debian-compile.log)"
	verdict 1
fi
say "OK: Debian's config keeps both pfscale options and the series' objects compile without warnings"
verdict 0
