/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for the pf-range timing in docs/debuggers.md: map MiB
 * (argument, default 1024) of private anonymous memory in 4 KiB pages
 * (THP off), touch every page, print where it is and sleep until the host
 * kills QEMU:
 *
 *   GDBBIG pid=PID addr=0xSTART end=0xEND pages=N
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL

int main(int argc, char **argv)
{
	long mb = argc > 1 ? atol(argv[1]) : 1024, i, pages;
	char *p;

	pages = mb * 256;
	p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		p[i * PAGE] = 1;
	printf("GDBBIG pid=%d addr=%p end=%p pages=%ld\n", getpid(), (void *)p,
	       (void *)(p + pages * PAGE), pages);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}
