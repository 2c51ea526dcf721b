// SPDX-License-Identifier: GPL-2.0
/*
 * fork (COW) while other threads fault: the parent's threads keep faulting
 * fresh pages and writing their slots while the main thread forks. Each
 * child checks that a region written before the fork holds exactly what was
 * written, writes to it (COW) and exits; the parent checks it is unchanged.
 */
#include <sys/wait.h>
#include "common.h"

#define PAGES 256
#define FORKS 40

static char *stable, *churn;
static volatile int stop;

static void *faulter(void *p)
{
	long id = (long)p, i;
	size_t len = PAGES * PAGE;

	while (!stop) {
		for (i = 0; i < PAGES; i++)
			((volatile uint64_t *)(churn + i * PAGE))[id] = i;
		madvise(churn, len, MADV_DONTNEED);
	}
	return NULL;
}

static long check(uint64_t salt)
{
	long i, bad = 0;

	for (i = 0; i < PAGES; i++)
		if (((uint64_t *)(stable + i * PAGE))[0] != (salt ^ i))
			bad++;
	return bad;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), k, f, status, child_bad = 0;
	pthread_t tid[128];
	long i;

	tap_init(argv[0]);
	(void)argc;
	tap_plan(2);
	if (n > 64)
		n = 64;
	stable = map_anon(PAGES * PAGE);
	churn = map_anon(PAGES * PAGE);
	for (i = 0; i < PAGES; i++)
		((uint64_t *)(stable + i * PAGE))[0] = 0x5a5aULL ^ i;
	for (k = 0; k < n; k++)
		pthread_create(&tid[k], NULL, faulter, (void *)(long)k);
	for (f = 0; f < FORKS; f++) {
		pid_t pid = fork();

		if (pid == 0) {
			long b = check(0x5a5aULL);

			for (i = 0; i < PAGES; i++)
				((uint64_t *)(stable + i * PAGE))[0] = 0;
			_exit(b ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			child_bad++;
	}
	stop = 1;
	for (k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
	tap_check(child_bad == 0, "%d forks under %d faulting threads: children saw the pre-fork content",
		  FORKS, n);
	tap_check(check(0x5a5aULL) == 0, "parent content unchanged by the children's COW writes");
	return tap_exit();
}
