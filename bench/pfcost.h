/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pfcost marker protocol, shared by the guest (these inline functions)
 * and the QEMU plugin that recognises the markers (qemu/plugin/pfcost.c,
 * which includes this file for the bytes below): instructions that do
 * nothing on their own. Under the plugin the first pfcost_mark() starts
 * counting on every vCPU and the next one stops it and writes one report
 * record; pfcost_phase() ends the running interval and starts the next at
 * once. Records are numbered from 1 in the order the intervals end, over
 * the whole boot. Inside an interval, pfcost_window_open() and
 * pfcost_window_close() bound a window; the record also gives the sums
 * over its closed windows.
 */
#ifndef PFSCALE_PFCOST_H
#define PFSCALE_PFCOST_H

/*
 * A marker is xchg of a 16-bit register with itself: the operand-size
 * prefix, the opcode, then a ModRM byte naming the register twice, which
 * tells the markers apart. No compiler emits these.
 */
#define PFCOST_PREFIX 0x66
#define PFCOST_OPCODE 0x87
#define PFCOST_MARK 0xdb		/* xchg %bx,%bx: Bochs' magic breakpoint */
#define PFCOST_PHASE 0xd2		/* xchg %dx,%dx */
#define PFCOST_WINDOW_OPEN 0xc9		/* xchg %cx,%cx */
#define PFCOST_WINDOW_CLOSE 0xf6	/* xchg %si,%si */
#define PFCOST_MARKER_LEN 3

#define PFCOST_STR_(x) #x
#define PFCOST_STR(x) PFCOST_STR_(x)
#define PFCOST_MARKER(modrm)                                                   \
	__asm__ __volatile__(".byte " PFCOST_STR(PFCOST_PREFIX) ", "           \
			     PFCOST_STR(PFCOST_OPCODE) ", " PFCOST_STR(modrm)  \
			     ::: "memory")

static inline void pfcost_mark(void)
{
	PFCOST_MARKER(PFCOST_MARK);
}

static inline void pfcost_phase(void)
{
	PFCOST_MARKER(PFCOST_PHASE);
}

static inline void pfcost_window_open(void)
{
	PFCOST_MARKER(PFCOST_WINDOW_OPEN);
}

static inline void pfcost_window_close(void)
{
	PFCOST_MARKER(PFCOST_WINDOW_CLOSE);
}

/*
 * The marker an instruction's bytes @b (@len long) are, its ModRM byte;
 * 0 if it is none.
 */
static inline unsigned int pfcost_marker_of(const unsigned char *b, unsigned long len)
{
	if (len != PFCOST_MARKER_LEN || b[0] != PFCOST_PREFIX || b[1] != PFCOST_OPCODE)
		return 0;
	switch (b[2]) {
	case PFCOST_MARK: case PFCOST_PHASE: case PFCOST_WINDOW_OPEN: case PFCOST_WINDOW_CLOSE:
		return b[2];
	}
	return 0;
}

#endif
