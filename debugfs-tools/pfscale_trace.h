/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pfscale trace events as tracefs prints them (trace, trace_pipe), for
 * pfstat --trace and the guest tests. The format is the kernel's TP_printk
 * of include/trace/events/pfscale.h, after ftrace's usual prefix:
 *
 *   TASK-PID [CPU] FLAGS TIMESTAMP: pfscale_race_lost: COUNTER mm_id=ID
 *	address=0xADDR level=LEVEL expected=0xOLD found=0xNEW
 *
 * (pfscale_busy_pte likewise; FLAGS is absent if the irq-info option is
 * off.) COUNTER is a name of the kernel's counter table, so this parser
 * keeps no list of sites.
 */
#ifndef PFSCALE_TRACE_H
#define PFSCALE_TRACE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PFSCALE_TRACEFS "/sys/kernel/tracing"
#define PFSCALE_TRACE_EVENTS PFSCALE_TRACEFS "/events/pfscale"

struct pfscale_trace_event {
	char task[32];		/* comm of the faulting task */
	int pid, cpu;
	double time;		/* seconds, ftrace's clock */
	char event[24];		/* pfscale_race_lost or pfscale_busy_pte */
	char counter[64];	/* the counter (site) it was counted in */
	unsigned int mm_id;	/* the mm, hashed by the kernel */
	unsigned long address;
	char level[8];		/* pte, pmd, pud, p4d */
	unsigned long long expected, found;
};

/*
 * Parse one line of tracefs output into @e: 1 for a pfscale event, 0 for
 * any other line (a comment, another event), -1 for a pfscale event line
 * that does not have the expected format.
 */
static inline int pfscale_trace_parse(const char *line, struct pfscale_trace_event *e)
{
	const char *ev = strstr(line, ": pfscale_"), *br, *dash, *p;
	size_t n;

	if (!ev || line[0] == '#')
		return 0;
	memset(e, 0, sizeof(*e));
	if (sscanf(ev + 2, "%23[a-z_]: %63s mm_id=%u address=%lx level=%7s expected=%llx found=%llx",
		   e->event, e->counter, &e->mm_id, &e->address, e->level, &e->expected,
		   &e->found) != 7)
		return -1;
	/* TASK-PID: the comm may itself contain '-' and blanks. */
	br = strstr(line, " [");
	if (!br || br > ev)
		return -1;
	for (dash = br; dash > line && *dash != '-'; dash--)
		;
	p = line;
	while (*p == ' ')
		p++;
	if (dash <= p)
		return -1;
	n = dash - p < (long)sizeof(e->task) - 1 ? (size_t)(dash - p) : sizeof(e->task) - 1;
	memcpy(e->task, p, n);
	e->task[n] = 0;
	e->pid = atoi(dash + 1);
	e->cpu = atoi(br + 2);
	/* TIMESTAMP: the last number before the event name. */
	for (p = ev; p > br && p[-1] != ' '; p--)
		;
	e->time = atof(p);
	return 1;
}

#endif /* PFSCALE_TRACE_H */
