// SPDX-License-Identifier: GPL-2.0
/*
 * The OOM reaper's unmap against faulting threads: process_mrelease(2)
 * reaps a killed process's memory at once, with __oom_reap_task_mm()
 * (unmap_page_range() under mmap_read_lock, not the exit-time teardown),
 * while the victim's threads may still be inside faults that install
 * pages beside it (a SIGKILL is taken on the way back to user space). Per
 * round a victim with 2 x CPUs threads that rewrite and MADV_DONTNEED
 * their own pages of a shared region without pause (faults in flight
 * all the time), killed by pidfd_send_signal() and reaped by
 * process_mrelease() as soon as its threads have run a while. Each round
 * is a child of the leak watch's child, so AnonPages, PageTables, Mlocked and
 * the anon LRU must be back and no bad-mm or bad-page message logged once
 * the victims are gone. Evidence: process_mrelease() reaped (returned 0)
 * in ROUNDS rounds while the victim's faults ran (its fault count moved
 * in the millisecond before the kill).
 */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

#define PAGES 1024
#define ROUNDS 4
#define ROUND_TRIES 40	/* victims killed, at most */

/* Shared with the victims: pages written, so the killer sees faults run. */
struct shared {
	long writes;
	int reaped, tries, busy_at_kill, errors;
	int first_errno;
};

static struct shared *sh;
static char *region;

static void *victim_thread(void *p)
{
	long id = (long)p, i;

	for (;;)
		for (i = id; i < PAGES; i += 2 * ncpus()) {
			*(volatile long *)(region + i * PAGE) = i;
			madvise(region + i * PAGE, PAGE, MADV_DONTNEED);
			__atomic_add_fetch(&sh->writes, 1, __ATOMIC_RELAXED);
		}
	return NULL;
}

static void victim(void)
{
	pthread_t t;
	long k;

	region = map_anon(PAGES * PAGE);
	madvise(region, PAGES * PAGE, MADV_NOHUGEPAGE);
	for (k = 1; k < 2 * ncpus(); k++)
		if (pthread_create(&t, NULL, victim_thread, (void *)k))
			_exit(1);
	victim_thread(0);
}

/* One victim: fork, let it fault, kill it and reap its mm at once. */
static void one_victim(void)
{
	long w0, w1;
	pid_t pid;
	int fd, ret;

	sh->writes = 0;
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (pid == 0) {
		victim();
		_exit(0);
	}
	fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		tap_bail("pidfd_open");
	while (__atomic_load_n(&sh->writes, __ATOMIC_RELAXED) < PAGES)
		usleep(1000);
	w0 = __atomic_load_n(&sh->writes, __ATOMIC_RELAXED);
	usleep(1000);
	w1 = __atomic_load_n(&sh->writes, __ATOMIC_RELAXED);
	if (syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0))
		tap_bail("pidfd_send_signal");
	ret = syscall(SYS_process_mrelease, fd, 0);
	sh->tries++;
	if (ret == 0) {
		sh->reaped++;
		if (w1 > w0)
			sh->busy_at_kill++;
	} else if (!sh->errors++) {
		sh->first_errno = errno;
	}
	close(fd);
	waitpid(pid, NULL, 0);
}

/* The killer, in the leak watch's child: victims until enough were reaped busy. */
static void killer(void *unused)
{
	(void)unused;
	while (sh->busy_at_kill < fixed_count(ROUNDS) && sh->tries < ROUND_TRIES)
		one_victim();
}

int main(int argc, char **argv)
{
	struct leak_watch w;
	int status;

	tap_init(argv[0]);
	(void)argc;
	sh = map_shared(sizeof(*sh));
	tap_plan(1 + LEAK_CHECKS);
	status = leak_watch_run(&w, killer, NULL);
	if (sh->errors)
		tap_diag("process_mrelease failed %d times (first: %s): the victim's mm was gone already",
			 sh->errors, strerror(sh->first_errno));
	tap_check(status == 0 && sh->busy_at_kill >= fixed_count(ROUNDS),
		  "race reproduced: process_mrelease() reaped %d victims killed while their %ld threads faulted (%d reaped of %d killed; %ld wanted)%s",
		  sh->busy_at_kill, 2 * ncpus(), sh->reaped, sh->tries, fixed_count(ROUNDS),
		  sh->busy_at_kill >= fixed_count(ROUNDS) ? "" : ": race not reproduced");
	leak_watch_check(&w, "victims reaped by process_mrelease");
	return tap_exit();
}
