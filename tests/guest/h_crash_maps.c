// SPDX-License-Identifier: GPL-2.0
/*
 * h_crash_maps: a process with a known, varied VMA layout for
 * tests/host/crash.sh's pfvma check (crash walks mm->mm_mt itself).
 *
 * It forks; the child maps NMAPS small anonymous regions with rotating
 * protections (so neighbours never merge and the maple tree grows past
 * one leaf), a private file mapping at a nonzero offset, a shared tmpfs
 * file mapping and a shared anonymous mapping, then prints its
 * /proc/self/maps as "CRASHMAPS <line>" and "CRASHMAPS READY pid=N" and
 * parks in a raw pause() forever. The parent returns once the child is
 * parked, so whatever runs next (h_crash_fig) sees no fault from it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

#define NMAPS 240

static char mbuf[262144], obuf[327680];

static void die(const char *what)
{
	fprintf(stderr, "h_crash_maps: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void layout(const char *self)
{
	static const int prot[4] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE,
				     PROT_READ | PROT_EXEC };
	char *p;
	int i, fd;

	for (i = 0; i < NMAPS; i++) {
		p = mmap(NULL, (1 + i % 3) * PAGE, prot[i % 4],
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap anon");
		if (prot[i % 4] & PROT_WRITE)
			p[0] = 1;	/* give some an anon_vma and a page */
	}
	/* A private file mapping at file offset 4096. */
	fd = open(self, O_RDONLY);
	if (fd < 0)
		die("open self");
	if (mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, PAGE) == MAP_FAILED)
		die("mmap self");
	close(fd);
	/* A shared file mapping (rw-s) of a tmpfs file. */
	fd = open("/tmp/crashmaps.shm", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 3 * PAGE))
		die("tmpfs file");
	p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap shared file");
	p[0] = 1;
	close(fd);
	/* Shared anonymous: shmem, "/dev/zero (deleted)" in maps. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap shared anon");
	p[0] = 1;
}

int main(int argc, char **argv)
{
	int pfd[2], fd;
	long n = 0, r;
	char *line, *save = NULL, c = 0;
	pid_t pid;

	(void)argc;
	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid > 0) {
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			return 1;	/* the child died before parking */
		return 0;
	}
	close(pfd[0]);
	layout(argv[0][0] == '/' ? argv[0] : "/pfscale/bin/h_crash_maps");
	memset(obuf, 0, sizeof(obuf));
	fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		die("open maps");
	while ((r = read(fd, mbuf + n, sizeof(mbuf) - 1 - n)) > 0)
		n += r;
	close(fd);
	mbuf[n] = 0;
	for (line = strtok_r(mbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		snprintf(obuf + strlen(obuf), sizeof(obuf) - strlen(obuf), "CRASHMAPS %s\n", line);
	snprintf(obuf + strlen(obuf), sizeof(obuf) - strlen(obuf),
		 "CRASHMAPS READY pid=%d\n", getpid());
	if (write(1, obuf, strlen(obuf)) < 0)
		return 1;
	if (write(pfd[1], "x", 1) != 1)
		return 1;
	raw_pause_forever();
}
