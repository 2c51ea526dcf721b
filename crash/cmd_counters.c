/* SPDX-License-Identifier: GPL-2.0 */
/* pfcounters (gdb's pf-counters) and pfps: the pfscale counters and the tasks. */
#include "pfscale.h"

char *help_pfcounters[] = {
	"pfcounters",
	"pfscale lost page-fault race counters, summed over CPUs",
	"[-j]",
	"  Prints one \"name value\" line per pfscale counter, the sum over every",
	"  CPU of the per-CPU pfscale_counters, in the format of the guest's",
	"  /sys/kernel/debug/pfscale/counters. The names are read from the",
	"  kernel's pfscale_counter_desc[] in the dump, so they always match the",
	"  kernel. On a kernel without the pfscale patches it says so.",
	"  pf-counters is the same command, by gdb's name.",
	"    -j  one JSON object, as gdb's pf-counters --json: \"counters\"",
	"        {NAME: TOTAL}, \"per_cpu\" {CPU: {NAME: VALUE}}, \"desc\"",
	"        {NAME: {\"kind\", \"level\", \"site\", \"meaning\"}} (kind and level:",
	"        include/linux/pfscale_counters.h)",
	"\nEXAMPLE",
	"  %s> pfcounters",
	"  anon_fault_locked 1234",
	"  anon_pte_recheck_lost 2",
	"  ...",
	NULL
};

/* A string member of pfscale_counter_desc[i] into buf ("" if none). */
static void pfs_desc_string(long i, int id, char *buf, int len)
{
	ulong p = 0;

	buf[0] = 0;
	pfs_read_member(symbol_value("pfscale_counter_desc") + i * L.desc_size, id, &p,
			sizeof(p), FAULT_ON_ERROR);
	if (p)
		read_string(p, buf, len - 1);
}

struct pfs_counters {
	char (*names)[64];
	ulong *values;		/* [counter * ncpus + cpu] */
	int ncpus;
};

static void pfs_counters_read(struct pfs_counters *c)
{
	ulong base = symbol_value("pfscale_counters");
	long i;
	int cpu;

	for (i = 0; i < L.nr_counters; i++) {
		pfs_desc_string(i, PFS_M_pfscale_counter_desc_name, c->names[i],
				sizeof(c->names[i]));
		if (!c->names[i][0])
			snprintf(c->names[i], sizeof(c->names[i]), "counter%ld", i);
		for (cpu = 0; cpu < c->ncpus; cpu++) {
			ulong addr = base + i * sizeof(ulong), *v = &c->values[i * c->ncpus + cpu];

			if (kt->flags & PER_CPU_OFF)
				addr += kt->__per_cpu_offset[cpu];
			*v = 0;
			if (!readmem(addr, KVADDR, v, sizeof(ulong), "pfscale_counters",
				     RETURN_ON_ERROR))
				error(INFO, "cannot read cpu %d's counter %s\n", cpu, c->names[i]);
		}
	}
}

static ulong pfs_counter_sum(struct pfs_counters *c, long i)
{
	ulong sum = 0;
	int cpu;

	for (cpu = 0; cpu < c->ncpus; cpu++)
		sum += c->values[i * c->ncpus + cpu];
	return sum;
}

/* "desc": {NAME: {kind, level, site, meaning}} */
static void pfs_counters_desc_json(struct jw *w, struct pfs_counters *c)
{
	static const struct { const char *key; int id; } fields[] = {
		{ "kind", PFS_M_pfscale_counter_desc_kind },
		{ "level", PFS_M_pfscale_counter_desc_level },
		{ "site", PFS_M_pfscale_counter_desc_site },
		{ "meaning", PFS_M_pfscale_counter_desc_meaning },
	};
	char buf[512];
	long i;
	int f;

	jw_name(w, "desc");
	jw_start_object(w);
	for (i = 0; i < L.nr_counters; i++) {
		jw_name(w, c->names[i]);
		jw_start_object(w);
		for (f = 0; f < 4; f++) {
			pfs_desc_string(i, fields[f].id, buf, sizeof(buf));
			jw_string_field(w, fields[f].key, buf);
		}
		jw_end_object(w);
	}
	jw_end_object(w);
}

static void pfs_counters_json(struct pfs_counters *c)
{
	struct jw w;
	char cpuname[16];
	long i;
	int cpu;

	jw_init(&w, fp, JW_SPACED);
	jw_start_object(&w);
	jw_name(&w, "counters");
	jw_start_object(&w);
	for (i = 0; i < L.nr_counters; i++)
		jw_uint_field(&w, c->names[i], pfs_counter_sum(c, i));
	jw_end_object(&w);
	jw_name(&w, "per_cpu");
	jw_start_object(&w);
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		snprintf(cpuname, sizeof(cpuname), "%d", cpu);
		jw_name(&w, cpuname);
		jw_start_object(&w);
		for (i = 0; i < L.nr_counters; i++)
			jw_uint_field(&w, c->names[i], c->values[i * c->ncpus + cpu]);
		jw_end_object(&w);
	}
	jw_end_object(&w);
	pfs_counters_desc_json(&w, c);
	jw_end_object(&w);
}

void cmd_pfcounters(void)
{
	static char names[PFS_MAX_COUNTERS][64];
	struct pfs_counters c = { names, NULL, kt->cpus };
	int json;

	if (pfs_options(&json) != argcnt)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_COUNTERS);
	c.values = (ulong *)GETBUF(L.nr_counters * c.ncpus * sizeof(ulong));
	pfs_counters_read(&c);
	if (json)
		pfs_counters_json(&c);
	else
		for (long i = 0; i < L.nr_counters; i++)
			fprintf(fp, "%s %lu\n", names[i], pfs_counter_sum(&c, i));
	FREEBUF(c.values);
}

char *help_pfps[] = {
	"pfps",
	"list tasks by walking the task list (works where ps does not)",
	"[-j]",
	"  Lists every task, one line each: PID, TGID, COMM, the task_struct and",
	"  the mm_struct addresses (0 for kernel threads). It walks",
	"  init_task.tasks and each thread group's signal->thread_head list",
	"  itself, so it works on kernels whose task table crash cannot",
	"  initialise (crash 8.0.2 on 6.1: ps shows only the idle tasks).",
	"    -j  one JSON object {\"tasks\": [{\"pid\", \"tgid\", \"comm\", \"task\", \"mm\"}]}",
	"\nEXAMPLE",
	"  %s> pfps",
	"      PID    TGID  COMM              TASK              MM",
	"        0       0  swapper/0         ffffffff82012940  0",
	"        1       1  init              ffff888003c58000  ffff888003c74000",
	NULL
};

static int pfps_one(struct pfs_task *t, void *arg)
{
	struct jw *w = arg;

	if (!w) {
		fprintf(fp, "%8d %7d  %-16s  %-16lx  %lx\n", t->pid, t->tgid, t->comm, t->task,
			t->mm);
		return 0;
	}
	jw_start_object(w);
	jw_int_field(w, "pid", t->pid);
	jw_int_field(w, "tgid", t->tgid);
	jw_string_field(w, "comm", t->comm);
	jw_hex_field(w, "task", t->task);
	jw_hex_field(w, "mm", t->mm);
	jw_end_object(w);
	return 0;
}

void cmd_pfps(void)
{
	struct jw w;
	int json;

	if (pfs_options(&json) != argcnt)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK);
	if (!json) {
		fprintf(fp, "%8s %7s  %-16s  %-16s  %s\n", "PID", "TGID", "COMM", "TASK", "MM");
		pfs_for_each_task(pfps_one, NULL);
		return;
	}
	jw_init(&w, fp, JW_SPACED);
	jw_start_object(&w);
	jw_name(&w, "tasks");
	jw_start_array(&w);
	pfs_for_each_task(pfps_one, &w);
	jw_end_array(&w);
	jw_end_object(&w);
}
