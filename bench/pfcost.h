/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's side of the pfcost QEMU plugin (qemu/plugin/pfcost.c): two
 * marker instructions that do nothing on their own. Under the plugin the
 * first pfcost_mark() starts counting on every vCPU and the next one stops
 * it and writes one report record; pfcost_phase() ends the running interval
 * and starts the next at once. Records are numbered from 1 in the order the
 * intervals end, over the whole boot. Inside an interval,
 * pfcost_window_open() and pfcost_window_close() bound a window; the record
 * also gives the sums over its closed windows.
 */
#ifndef PFSCALE_PFCOST_H
#define PFSCALE_PFCOST_H

/* xchg %bx,%bx (66 87 db): Bochs' magic breakpoint, never in compiled code */
static inline void pfcost_mark(void)
{
	__asm__ __volatile__("xchg %%bx,%%bx" ::: "memory");
}

/* xchg %dx,%dx (66 87 d2) */
static inline void pfcost_phase(void)
{
	__asm__ __volatile__("xchg %%dx,%%dx" ::: "memory");
}

/* xchg %cx,%cx (66 87 c9) */
static inline void pfcost_window_open(void)
{
	__asm__ __volatile__("xchg %%cx,%%cx" ::: "memory");
}

/* xchg %si,%si (66 87 f6) */
static inline void pfcost_window_close(void)
{
	__asm__ __volatile__("xchg %%si,%%si" ::: "memory");
}

#endif
