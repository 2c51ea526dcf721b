// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test (tests/host/harness.sh): a guest program that fails in
 * one of the ways tests/run.sh must see, and counts as a failure:
 *
 *   h_fail segv     plan 4, two results, then a write to NULL (SIGSEGV)
 *   h_fail bus      plan 3, one result, then a read past the end of a
 *                   file mapping (SIGBUS, as a wrong VM_FAULT_SIGBUS would)
 *   h_fail exit     plan 3, one result, then exit(1)
 *   h_fail noplan   two results, no plan, exit 0
 *   h_fail skip     plan 2, one result and one skip no allowlist names
 *   h_fail more     plan 1, two results
 *   h_fail oops     plan 2, one result, then sched_rr_get_interval() every
 *                   100 ms for 120 s: the host's gdb turns it into an oops
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include "tap.h"

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct timespec ts;
	volatile char *p;
	int i, fd;

	tap_init(argv[0]);
	if (!strcmp(mode, "segv")) {
		tap_plan(4);
		tap_check(1, "before the crash (1)");
		tap_check(1, "before the crash (2)");
		p = NULL;
		*p = 1;
		tap_check(1, "after the crash");
	} else if (!strcmp(mode, "bus")) {
		tap_plan(3);
		tap_check(1, "before the SIGBUS");
		fd = open("/tmp/h_fail.empty", O_RDWR | O_CREAT | O_TRUNC, 0600);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (fd < 0 || p == MAP_FAILED)
			tap_bail("map an empty file");
		tap_diag("read past EOF: %d", p[0]);
		tap_check(1, "after the SIGBUS");
	} else if (!strcmp(mode, "exit")) {
		tap_plan(3);
		tap_check(1, "before exit(1)");
		exit(1);
	} else if (!strcmp(mode, "noplan")) {
		tap_check(1, "a result without a plan (1)");
		tap_check(1, "a result without a plan (2)");
	} else if (!strcmp(mode, "skip")) {
		tap_plan(2);
		tap_check(1, "before the skip");
		tap_skip("a skip that tests/expected-skips does not name");
	} else if (!strcmp(mode, "more")) {
		tap_plan(1);
		tap_check(1, "the planned result");
		tap_check(1, "one result more than planned");
	} else if (!strcmp(mode, "oops")) {
		tap_plan(2);
		tap_check(1, "before the oops");
		printf("HFAIL oops: calling sched_rr_get_interval\n");
		for (i = 0; i < 1200; i++) {
			syscall(SYS_sched_rr_get_interval, 0, &ts);
			usleep(100000);
		}
		tap_check(1, "sched_rr_get_interval was not made to oops");
	} else {
		tap_plan(1);
		tap_check(0, "a mode: segv, bus, exit, noplan, skip, more or oops");
	}
	return tap_exit();
}
