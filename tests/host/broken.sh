#!/bin/bash
# The suite catches the bugs it is there for: deliberately broken kernel
# variants (tests/broken/variants) built in the test kernel's tree and
# booted on the atomic path, plain and widened; each must be caught by the
# check meant for it (tests/broken/check.sh). A variant costs an
# incremental kernel build and two short boots, so make test runs the ones
# in PFSCALE_BROKEN (default below: the back-outs only a leak check sees,
# and the one that needs writers flushing their TLB);
# make broken runs them all.
top=$(cd "$(dirname "$0")/../.." && pwd)
variants=${PFSCALE_BROKEN:-loser-forgets-put_page locked-loser-skips-backout pmd-table-loser-leaks madv-free-clears}
set -f
# shellcheck disable=SC2086 # one word per variant
set -- $variants
set +f
echo "1..$#"
for v in "$@"; do
	# The negative control reads this make test's atomic and widened boots.
	out=$(PFSCALE_BROKEN_CONTROL=${PFSCALE_OUT:-} "$top/tests/broken/check.sh" "$v" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	# check.sh's last line: the variant, caught or not, by which check.
	if [ $rc = 0 ]; then
		echo "ok - broken: ${out##*$'\n'}"
	else
		echo "not ok - broken: $v (check.sh exit $rc): ${out##*$'\n'}"
	fi
done
