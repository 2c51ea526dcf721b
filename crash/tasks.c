/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks, walked from init_task itself: crash 8.0.2 does not understand
 * 6.1's task table (its ps shows only the idle tasks).
 */
#include "pfscale.h"

static void pfs_read_task(ulong task, struct pfs_task *t)
{
	t->task = task;
	PFS_READ(task, task_struct_pid, t->pid, FAULT_ON_ERROR);
	PFS_READ(task, task_struct_tgid, t->tgid, FAULT_ON_ERROR);
	PFS_READ(task, task_struct_mm, t->mm, FAULT_ON_ERROR);
	memset(t->comm, 0, sizeof(t->comm));
	pfs_read_member(task, PFS_M_task_struct_comm, t->comm, TASK_COMM_LEN, FAULT_ON_ERROR);
}

/* The next entry of the list_head at addr. */
static ulong pfs_list_next(ulong addr)
{
	ulong next = 0;

	pfs_read_member(addr, PFS_M_list_head_next, &next, sizeof(next), FAULT_ON_ERROR);
	return next;
}

/*
 * Call fn for the threads of the group led by leader other than it, on
 * its signal->thread_head list. 1 when fn stopped the walk; *n counts.
 */
static int pfs_for_each_thread(ulong leader, int (*fn)(struct pfs_task *, void *), void *arg,
			       int *n)
{
	struct pfs_task t;
	ulong sig = 0, head, p;

	PFS_READ(leader, task_struct_signal, sig, FAULT_ON_ERROR);
	if (!sig)
		return 0;
	head = sig + OFF(signal_struct_thread_head);
	for (p = pfs_list_next(head); p && p != head && (*n)++ < PFS_MAX_TASKS;
	     p = pfs_list_next(p)) {
		ulong th = p - OFF(task_struct_thread_node);

		if (th == leader)
			continue;
		pfs_read_task(th, &t);
		if (fn(&t, arg))
			return 1;
	}
	return 0;
}

/*
 * Call fn for every task: each process on init_task.tasks (init_task
 * first), then the other threads of its group. Stops early, returning 1,
 * when fn returns nonzero.
 */
int pfs_for_each_task(int (*fn)(struct pfs_task *, void *), void *arg)
{
	ulong init_task = symbol_value("init_task"), head, p = init_task, next;
	struct pfs_task t;
	int n = 0;

	head = init_task + OFF(task_struct_tasks);
	do {
		pfs_read_task(p, &t);
		if (fn(&t, arg) || pfs_for_each_thread(p, fn, arg, &n))
			return 1;
		next = pfs_list_next(p + OFF(task_struct_tasks));
		p = next - OFF(task_struct_tasks);
	} while (next && next != head && n++ < PFS_MAX_TASKS);
	return 0;
}

static int pfs_find_pid(struct pfs_task *t, void *arg)
{
	struct pfs_task *want = arg;

	if (t->pid != want->pid)
		return 0;
	*want = *t;
	return 1;
}

/* The user task with pid arg, or one error line. */
void pfs_lookup(char *arg, struct pfs_task *t)
{
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->pid = (int)dtol(arg, RETURN_ON_ERROR | QUIET, &err);
	if (err || !decimal(arg, 0))
		error(FATAL, "not a pid: %s\n", arg);
	if (!pfs_for_each_task(pfs_find_pid, t))
		error(FATAL, "no task with pid %s\n", arg);
	if (!t->mm)
		error(FATAL, "pid %d (%s) is a kernel thread: no mm\n", t->pid, t->comm);
}
