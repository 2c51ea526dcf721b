/* SPDX-License-Identifier: GPL-2.0 */
/* pfrss (gdb's pf-rss): the split rss of an mm. */
#include "pfscale.h"

char *help_pfrss[] = {
	"pfrss",
	"split RSS of a process: per-thread deltas, mm counters, rss_mm, rss_split",
	"[-j] pid",
	"  Finds the task with this pid (any thread's), then every task using",
	"  the same mm, and prints, as the guest's /sys/kernel/debug/pfscale/rss",
	"  does (without its page-table scan):",
	"    thread TID events E filepages F anonpages A swapents S shmempages H",
	"                   each thread's unsynced task->rss_stat delta",
	"    threads N      how many tasks use the mm",
	"    mm ...         the mm_struct's rss_stat counters (what /proc shows)",
	"    split ...      those plus every thread's delta",
	"    rss_mm N       filepages + anonpages + shmempages of the mm counters",
	"    rss_split N    the same of the split sums",
	"  The counters and their names are the kernel's MM_* enumerators. An",
	"  unknown pid, or a kernel thread, gets one line saying so. pf-rss is",
	"  the same command, by gdb's name.",
	"    -j  one JSON object with the keys of gdb's pf-rss --json: pid, tgid,",
	"        comm, mm, threads [{pid, comm, events, delta}], mm_counters,",
	"        delta_sum, split_counters, rss_mm, rss_split",
	"\nEXAMPLE",
	"  %s> pfrss 70",
	"  pid 70",
	"  comm t_rss",
	"  thread 70 events 3 filepages 0 anonpages 2 swapents 0 shmempages 0",
	"  threads 1",
	"  mm filepages 301 anonpages 40 swapents 0 shmempages 0",
	"  split filepages 301 anonpages 42 swapents 0 shmempages 0",
	"  rss_mm 341",
	"  rss_split 343",
	NULL
};

static int pfs_rss_thread(struct pfs_task *t, void *arg)
{
	struct pfs_rss *r = arg;
	struct pfs_thread *th;
	int count[PFD_MAX_MM_COUNTERS], i;

	if (t->mm != r->who.mm || r->nthreads >= PFS_MAX_THREADS)
		return 0;
	th = &r->threads[r->nthreads++];
	th->pid = t->pid;
	strcpy(th->comm, t->comm);
	PFS_READ(t->task + OFF(task_struct_rss_stat), task_rss_stat_events, th->events,
		 FAULT_ON_ERROR);
	pfs_read_member(t->task + OFF(task_struct_rss_stat), PFS_M_task_rss_stat_count, count,
			L.nr_mm_counters * sizeof(int), FAULT_ON_ERROR);
	for (i = 0; i < L.nr_mm; i++) {
		th->delta[i] = count[L.mm_index[i]];
		r->delta[i] += th->delta[i];
	}
	return 0;
}

/* Read the split rss of t's mm into r (r->threads: PFS_MAX_THREADS). */
void pfs_rss_read(struct pfs_task *t, struct pfs_rss *r)
{
	long mmc[PFD_MAX_MM_COUNTERS];
	int i;

	r->who = *t;
	r->nthreads = 0;
	memset(r->delta, 0, sizeof(r->delta));
	/* mm_struct.rss_stat.count[] is atomic_long_t: one long each. */
	pfs_read_member(t->mm + OFF(mm_struct_rss_stat), PFS_M_mm_rss_stat_count, mmc,
			L.nr_mm_counters * sizeof(long), FAULT_ON_ERROR);
	for (i = 0; i < L.nr_mm; i++)
		r->mm[i] = mmc[L.mm_index[i]];
	pfs_for_each_task(pfs_rss_thread, r);
	r->rss_mm = r->rss_split = 0;
	for (i = 0; i < L.nr_mm; i++)
		if (pfd_mm_in_rss(L.mm_names[i])) {	/* get_mm_rss() */
			r->rss_mm += r->mm[i];
			r->rss_split += r->mm[i] + r->delta[i];
		}
}

/* {NAME: a[i] + b[i]} of the MM counters (b may be NULL). */
static void pfs_counts_json(struct jw *w, const char *key, const long *a, const long *b)
{
	int i;

	jw_name(w, key);
	jw_start_object(w);
	for (i = 0; i < L.nr_mm; i++)
		jw_int_field(w, L.mm_names[i], a[i] + (b ? b[i] : 0));
	jw_end_object(w);
}

/* "threads": [...], as gdb's pf-rss and pf-mm print it. */
void pfs_threads_json(struct jw *w, struct pfs_rss *r)
{
	int i;

	jw_name(w, "threads");
	jw_start_array(w);
	for (i = 0; i < r->nthreads; i++) {
		struct pfs_thread *th = &r->threads[i];

		jw_start_object(w);
		jw_int_field(w, "pid", th->pid);
		jw_string_field(w, "comm", th->comm);
		jw_int_field(w, "events", th->events);
		pfs_counts_json(w, "delta", th->delta, NULL);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* mm_counters, delta_sum, split_counters, rss_mm, rss_split */
void pfs_rss_json(struct jw *w, struct pfs_rss *r)
{
	pfs_counts_json(w, "mm_counters", r->mm, NULL);
	pfs_counts_json(w, "delta_sum", r->delta, NULL);
	pfs_counts_json(w, "split_counters", r->mm, r->delta);
	jw_int_field(w, "rss_mm", r->rss_mm);
	jw_int_field(w, "rss_split", r->rss_split);
}

/* " NAME VALUE" of each MM counter, a[i] + b[i] (b may be NULL). */
static void pfs_counts_text(const long *a, const long *b)
{
	int k;

	for (k = 0; k < L.nr_mm; k++)
		fprintf(fp, " %s %ld", L.mm_names[k], a[k] + (b ? b[k] : 0));
	fprintf(fp, "\n");
}

static void pfs_rss_text(struct pfs_task *t, struct pfs_rss *r)
{
	int i;

	fprintf(fp, "pid %d\ncomm %s\n", t->pid, t->comm);
	for (i = 0; i < r->nthreads; i++) {
		fprintf(fp, "thread %d events %d", r->threads[i].pid, r->threads[i].events);
		pfs_counts_text(r->threads[i].delta, NULL);
	}
	fprintf(fp, "threads %d\nmm", r->nthreads);
	pfs_counts_text(r->mm, NULL);
	fprintf(fp, "split");
	pfs_counts_text(r->mm, r->delta);
	fprintf(fp, "rss_mm %ld\nrss_split %ld\n", r->rss_mm, r->rss_split);
}

void cmd_pfrss(void)
{
	struct pfs_task t;
	struct pfs_rss r;
	struct jw w;
	int json;

	if (pfs_options(&json) != argcnt - 1)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_RSS);
	pfs_lookup(args[optind], &t);
	r.threads = (struct pfs_thread *)GETBUF(PFS_MAX_THREADS * sizeof(*r.threads));
	pfs_rss_read(&t, &r);
	if (!json) {
		pfs_rss_text(&t, &r);
		FREEBUF(r.threads);
		return;
	}
	jw_init(&w, fp, JW_SPACED);
	jw_start_object(&w);
	jw_int_field(&w, "pid", t.pid);
	jw_int_field(&w, "tgid", t.tgid);
	jw_string_field(&w, "comm", t.comm);
	jw_hex_field(&w, "mm", t.mm);
	pfs_threads_json(&w, &r);
	pfs_rss_json(&w, &r);
	jw_end_object(&w);
	FREEBUF(r.threads);
}
