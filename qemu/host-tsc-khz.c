// SPDX-License-Identifier: GPL-2.0
/*
 * host-tsc-khz: the host's TSC rate in kHz, for the guest's tsc_early_khz=.
 *
 * Under TCG, QEMU's guest RDTSC returns the host's TSC plus an offset, so
 * the guest TSC runs at the host's rate. The guest cannot measure that rate
 * itself: it calibrates against the emulated PIT over a few milliseconds,
 * which under TCG often fails ("tsc: Unable to calibrate against PIT"),
 * and then it has no clocksource but jiffies, no one-shot tick and no
 * NO_HZ idle: the idle vCPU ticks at HZ. Told the rate, it uses the TSC.
 *
 * Measured against CLOCK_MONOTONIC_RAW over 3 x 100 ms; the median is
 * printed. Exits 1 without output where there is no constant-rate TSC to
 * measure (not x86, or /proc/cpuinfo lacks constant_tsc).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

static int has_constant_tsc(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " constant_tsc"))
			found = 1;
	fclose(f);
	return found;
}

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double one_khz(void)
{
	const struct timespec nap = { 0, 100 * 1000 * 1000 };
	double t0 = ns_now(), t1;
	unsigned long long c0 = __rdtsc(), c1;

	nanosleep(&nap, NULL);
	c1 = __rdtsc();
	t1 = ns_now();
	return (c1 - c0) / (t1 - t0) * 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	double khz[3];
	int i;

	if (!has_constant_tsc())
		return 1;
	for (i = 0; i < 3; i++)
		khz[i] = one_khz();
	qsort(khz, 3, sizeof(khz[0]), by_value);
	printf("%.0f\n", khz[1]);
	return 0;
}
#else
int main(void)
{
	return 1;
}
#endif
