// SPDX-License-Identifier: GPL-2.0
/*
 * Guest helper for tests/host/pfcost.sh: sharing patterns whose cache-line
 * transfer counts the pfcost plugin's coherence model predicts exactly,
 * and a loop whose instruction count is known. Each phase runs between two
 * pfcost markers (one plugin record each, in this order) with two threads
 * pinned to CPUs 0 and 1, started before the interval opens:
 *
 *   insns     one thread: a dec/jnz loop of K iterations: 2K user
 *             instructions, no pause loop
 *   phase     the same loop again, in an interval that pfcost_phase()
 *             started as it ended the last one
 *   window    one thread faults P fresh pages inside a pfcost window, P
 *             outside it, and P in a window left open at the interval's
 *             end; a close with no open window comes first and after the
 *             window: the record's window has 1 window and P faults
 *   pingpong  the threads take turns on one line N times (wait until the
 *             counter's parity is mine, then store counter+1): each turn
 *             is a load of the other's write and a store to a line it
 *             holds, 2N transfers on that line
 *   atomic    the same turns taken with lock xadd: 2N (the atomic RMW is
 *             one store)
 *   rmw       turns on a flag line (2N); each turn also does lock incq and
 *             a plain `addq $1,(mem)` on two other lines, which the other
 *             thread wrote last: N each (an RMW instruction is one read
 *             for ownership, not a load plus a store)
 *   private   each thread stores to its own line N times: about 0
 *
 * Prints one line per phase for the host:
 *
 *   PFCOST_MODEL phase=NAME seq=S n=N k=K line=0x.. [line2=0x.. line3=0x..]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pfcost.h"

#define N_TURNS 10000
#define K_LOOP 1000000UL
#define P_PAGES 64

struct line {
	volatile long v;
} __attribute__((aligned(64)));

static struct line turn, counter_atomic, counter_plain, priv[2], go, ready;
static const char *phase;
static int seq;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("h_pfcost_model: sched_setaffinity");
		exit(1);
	}
}

static inline void relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

/*
 * Wait until the turn counter has my parity; false once N turns are done.
 * Then pause a few microseconds without touching memory before the caller
 * writes: the plugin applies the other vCPU's store to its model just after
 * the store, and a write of ours within that gap would be ordered before it
 * (lock xadd turns 2.4 us apart lost 27% of their transfers that way; the
 * plugin's limit, docs/bench.md). The count per turn does not change.
 */
static int my_turn(int me, long *t)
{
	unsigned long k = 2000;

	while (((*t = turn.v) & 1) != me) {
		if (*t >= N_TURNS)
			return 0;
		relax();
	}
	__asm__ __volatile__("1: dec %0; jnz 1b" : "+r"(k));
	return *t < N_TURNS;
}

static void *worker(void *arg)
{
	int me = (long)arg;
	long t, i;

	pin(me);
	__atomic_fetch_add(&ready.v, 1, __ATOMIC_SEQ_CST);
	while (!go.v)
		relax();
	if (!strcmp(phase, "pingpong")) {
		while (my_turn(me, &t))
			turn.v = t + 1;
	} else if (!strcmp(phase, "atomic")) {
		while (my_turn(me, &t))
			__atomic_fetch_add(&turn.v, 1, __ATOMIC_SEQ_CST);
	} else if (!strcmp(phase, "rmw")) {
		while (my_turn(me, &t)) {
			__atomic_fetch_add(&counter_atomic.v, 1, __ATOMIC_SEQ_CST);
			__asm__ __volatile__("addq $1, %0" : "+m"(counter_plain.v));
			turn.v = t + 1;
		}
	} else {	/* private */
		for (i = 0; i < N_TURNS; i++)
			priv[me].v = i;
	}
	return NULL;
}

static void run_phase(const char *name, struct line *l1, struct line *l2, struct line *l3)
{
	pthread_t tid[2];
	long i;

	phase = name;
	turn.v = 0;
	go.v = 0;
	ready.v = 0;
	for (i = 0; i < 2; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)i)) {
			perror("h_pfcost_model: pthread_create");
			exit(1);
		}
	while (ready.v < 2)
		relax();
	pfcost_mark();
	go.v = 1;
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pfcost_mark();
	printf("PFCOST_MODEL phase=%s seq=%d n=%d k=0 line=%p", name, ++seq, N_TURNS,
	       (void *)l1);
	if (l2)
		printf(" line2=%p line3=%p", (void *)l2, (void *)l3);
	printf("\n");
	fflush(stdout);
}

static void touch(char *p)
{
	int i;

	for (i = 0; i < P_PAGES; i++)
		p[i * 4096L] = 1;
}

static void run_window(void)
{
	char *r = mmap(NULL, 3 * P_PAGES * 4096L, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED) {
		perror("h_pfcost_model: mmap");
		exit(1);
	}
	pfcost_mark();
	pfcost_window_close();		/* none open: ignored */
	pfcost_window_open();
	touch(r);
	pfcost_window_close();
	pfcost_window_close();		/* already closed: ignored */
	touch(r + P_PAGES * 4096L);
	pfcost_window_open();		/* left open: dropped */
	touch(r + 2 * P_PAGES * 4096L);
	pfcost_mark();
	printf("PFCOST_MODEL phase=window seq=%d n=%d k=0 line=0x0\n", ++seq, P_PAGES);
	fflush(stdout);
	munmap(r, 3 * P_PAGES * 4096L);
}

int main(void)
{
	unsigned long k = K_LOOP;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("h_pfcost_model: needs 2 CPUs\n");
		return 1;
	}
	pin(0);
	pfcost_mark();
	__asm__ __volatile__("1: dec %0; jnz 1b" : "+r"(k));
	pfcost_phase();
	k = K_LOOP;
	__asm__ __volatile__("1: dec %0; jnz 1b" : "+r"(k));
	pfcost_mark();
	printf("PFCOST_MODEL phase=insns seq=%d n=0 k=%lu line=0x0\n", ++seq, K_LOOP);
	printf("PFCOST_MODEL phase=phase seq=%d n=0 k=%lu line=0x0\n", ++seq, K_LOOP);
	fflush(stdout);
	run_window();
	run_phase("pingpong", &turn, NULL, NULL);
	run_phase("atomic", &turn, NULL, NULL);
	run_phase("rmw", &turn, &counter_atomic, &counter_plain);
	run_phase("private", &priv[0], &priv[1], &priv[1]);
	printf("PFCOST_MODEL done\n");
	return 0;
}
