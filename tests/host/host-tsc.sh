#!/bin/bash
# qemu/host-tsc-khz, which tells make bench's guests the host's TSC rate
# (tsc_early_khz=): a rate the guest would keep time with, so it must be a
# plausible CPU clock and the same when measured again.
#
#   tests/host/host-tsc.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/build/host-tsc-khz
echo "1..2"
if ! grep -qw constant_tsc /proc/cpuinfo; then
	echo "ok - host-tsc-khz: a plausible rate # SKIP the host has no constant_tsc"
	echo "ok - host-tsc-khz: the same rate measured again # SKIP the host has no constant_tsc"
	exit 0
fi
a=$("$tool") || a="(failed: exit $?)"
b=$("$tool") || b="(failed: exit $?)"
# 100 MHz - 10 GHz: a wrong unit (Hz, MHz) or a broken measurement is far out
if [[ $a =~ ^[0-9]+$ ]] && [ "$a" -ge 100000 ] && [ "$a" -le 10000000 ]; then
	echo "ok - host-tsc-khz: a plausible rate ($a kHz)"
else
	echo "not ok - host-tsc-khz: a plausible rate (got '$a', want 100000-10000000 kHz)"
fi
# within 0.2%: the guest's clock would drift that much against the host's
if [[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] && [ $(((a - b) * 1000 / a)) -ge -2 ] &&
	[ $(((a - b) * 1000 / a)) -le 2 ]; then
	echo "ok - host-tsc-khz: the same rate measured again ($a, $b kHz)"
else
	echo "not ok - host-tsc-khz: the same rate measured again (got '$a' and '$b' kHz, want within 0.2%)"
fi
