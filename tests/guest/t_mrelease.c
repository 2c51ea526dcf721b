// SPDX-License-Identifier: GPL-2.0
/*
 * The OOM reaper's unmap against faulting threads: process_mrelease(2)
 * reaps a killed process's memory at once, with __oom_reap_task_mm()
 * (unmap_page_range() under mmap_read_lock, not the exit-time teardown),
 * while the victim's threads may still be inside faults that install
 * pages beside it (a SIGKILL is taken on the way back to user space). Per
 * victim 2 x CPUs threads rewrite and MADV_DONTNEED their own pages of a
 * shared region without pause (faults in flight all the time); it is
 * killed by pidfd_send_signal() and reaped by process_mrelease() as soon
 * as its threads have run a while.
 *
 * Evidence that a fault met the reaper, at its site: the reaper sets
 * MMF_UNSTABLE before it zaps, and a fault that finds it
 * (check_stable_address_space(): under the PTE lock on the locked path,
 * after reading the empty PTE and again after a win on the atomic one)
 * returns VM_FAULT_SIGBUS, which the x86 fault handler turns into a
 * SIGBUS for the faulting thread. Nothing else here raises SIGBUS, so the
 * signal:signal_generate trace events with sig 7 are those faults. Victims
 * are killed until ROUNDS of them had such a fault (at most ROUND_TRIES;
 * the race windows widened after half of them, where the kernel can). The
 * victims run in a child of the leak watch's child, so AnonPages,
 * PageTables, Mlocked and the anon LRU must be back, and no bad-mm or
 * bad-page message logged, once they are gone: a page a fault installed
 * behind the reaper is freed by exit_mmap().
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
#define ROUND_TRIES 80	/* victims killed, at most */
#define SIGBUS_EVENT "events/signal/signal_generate"

/* Shared with the victims: pages written, so the killer sees faults run. */
struct shared {
	long writes;
	int reaped, tries, busy_at_kill, errors, widened;
	int first_errno;
	int met;		/* victims with a fault that met the reaper */
	long sigbus;		/* such faults, over all victims */
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

/* Trace the SIGBUS signals raised from now on (only those: a filter). */
static void sigbus_trace_start(void)
{
	tracefs_write("tracing_on", "0");
	tracefs_write(SIGBUS_EVENT "/filter", "sig == 7");
	tracefs_write(SIGBUS_EVENT "/enable", "1");
	tracefs_empty();
	tracefs_write("tracing_on", "1");
}

static void sigbus_trace_stop(void)
{
	tracefs_write(SIGBUS_EVENT "/enable", "0");
	tracefs_write(SIGBUS_EVENT "/filter", "0");
	tracefs_empty();
}

/* SIGBUS signals traced since sigbus_trace_start(). */
static long sigbus_traced(void)
{
	FILE *f = fopen(PFSCALE_TRACEFS "/trace", "r");
	char line[512];
	long n = 0;

	if (!f)
		tap_bail("open " PFSCALE_TRACEFS "/trace");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "signal_generate: sig=7 "))
			n++;
	fclose(f);
	return n;
}

/* One victim: fork, let it fault, kill it and reap its mm at once. */
static void one_victim(void)
{
	long w0, w1, sigbus0 = sigbus_traced(), sigbus;
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
	sigbus = sigbus_traced() - sigbus0;
	sh->sigbus += sigbus;
	if (ret == 0 && sigbus > 0)
		sh->met++;
}

/* The killer, in the leak watch's child: victims until enough met the reaper. */
static void killer(void *unused)
{
	(void)unused;
	while (sh->met < fixed_count(ROUNDS) && sh->tries < ROUND_TRIES) {
		if (sh->tries == ROUND_TRIES / 2 && !sh->widened)
			sh->widened = race_windows_widen("50");
		one_victim();
	}
	if (sh->widened)
		race_windows_off();
}

int main(int argc, char **argv)
{
	struct leak_watch w;
	int status;

	tap_init(argv[0]);
	(void)argc;
	sh = map_shared(sizeof(*sh));
	tap_plan(1 + LEAK_CHECKS);
	if (access(PFSCALE_TRACEFS "/" SIGBUS_EVENT, F_OK))
		tap_bail("no " PFSCALE_TRACEFS "/" SIGBUS_EVENT ": the fault that meets the reaper cannot be seen");
	sigbus_trace_start();
	status = leak_watch_run(&w, killer, NULL);
	sigbus_trace_stop();
	if (sh->errors)
		tap_diag("process_mrelease failed %d times (first: %s): the victim's mm was gone already",
			 sh->errors, strerror(sh->first_errno));
	tap_check(status == 0 && sh->met >= fixed_count(ROUNDS),
		  "race reproduced: faults met the OOM reaper (check_stable_address_space() found MMF_UNSTABLE: SIGBUS) in %d victims, %ld such faults (%s path; %d reaped of %d killed, %d while their %ld threads faulted; %ld wanted)%s%s",
		  sh->met, sh->sigbus, pfscale_path(), sh->reaped, sh->tries, sh->busy_at_kill,
		  2 * ncpus(), fixed_count(ROUNDS),
		  sh->widened ? "; race windows widened to 50 us after half the victims" : "",
		  sh->met >= fixed_count(ROUNDS) ? "" : ": race not reproduced");
	leak_watch_check(&w, "victims reaped by process_mrelease");
	return tap_exit();
}
