// SPDX-License-Identifier: GPL-2.0
/*
 * pfcost: a QEMU TCG plugin (API v1, QEMU 7.2) that counts what a stretch of
 * guest execution costs, between two marker instructions the guest executes:
 * instructions per vCPU (user and kernel, spin-waiting apart), memory
 * accesses, and transfers of 64-byte physical cache lines between vCPUs,
 * each transfer attributed to the code that made it (kernel function from
 * System.map, or "user") and to the data it touched.
 *
 *   qemu-system-x86_64 ... -plugin pfcost.so,out=FILE[,map=System.map]
 *                              [,top=N][,print=on]
 *
 * out=FILE     every interval appends one JSON object (one line) to FILE
 * map=FILE     the guest kernel's System.map: names for code and static data
 * cache=KB     the per-vCPU cache size of the model below (default 2048)
 * top=N        length of the top lists in the report (default 15)
 * print=on     also print a one-line summary per interval through QEMU's
 *              log (shown with -d plugin)
 * windows=on   the record also lists each closed window's own counts
 *              ("window_list": seconds, transfers by data class, per-vCPU
 *              counts), to see what varies within a run
 * paging=4|5   the guest's paging levels: the address map below (default 4)
 * page_offset_base=A, vmalloc_base=A, vmemmap_base=A
 *              the guest kernel's bases of the direct map, vmalloc and
 *              vmemmap (its variables of these names, or its constants;
 *              default: the map of paging=, nokaslr)
 * struct_page=N  sizeof(struct page) in the guest kernel (default 64)
 *              (qemu/pfcost-layout reads these from the kernel's vmlinux;
 *              qemu/boot.sh -P passes them)
 *
 * Markers (bench/pfcost.h, the protocol's one description; docs/bench.md
 * "Cost model"): the mark starts an interval, the next one ends it; the
 * phase marker ends the running interval and starts the next at once.
 * Counting covers all vCPUs, whichever vCPU executed the marker. Inside an
 * interval, the window markers open and close a window: the
 * record's "window" sums faults, instructions and transfers per vCPU over
 * the closed windows (pfbench: from when its last worker starts to when
 * the first one is done, the stretch in which all of them run).
 *
 * Coherence model: every vCPU has a private cache of 64-byte lines of guest
 * physical memory, MSI-like. A line is held by a set of vCPUs, and is dirty
 * when one vCPU wrote it and nobody has read it since. Capacity is
 * approximated by age: the copies of a line count as evicted once the vCPU
 * that last filled or dirtied it has filled more than cache=KB (default
 * 2048, an L2) of other lines since; cache=0 makes the caches infinite.
 *   - load by v: a hit if v holds the line; if another vCPU holds it dirty
 *     (and it has not aged out), one transfer (that vCPU's write moves to
 *     v; the line becomes clean and shared); a line nobody holds dirty is
 *     a fill, not a transfer;
 *   - store by v: unless v is its only holder, one transfer (another vCPU
 *     held it, clean or dirty: an ownership transfer, however many copies
 *     it invalidates); v then holds it alone, dirty;
 *   - an instruction that reads and writes the same line (an atomic
 *     read-modify-write, which QEMU reports as one access, or a plain x86
 *     RMW such as `add %eax,(mem)`, which it reports as a load then a store)
 *     is one store: a read for ownership;
 *   - an access that crosses a line boundary counts for its first line;
 *     MMIO and accesses above phys_bits are not lines (counted apart);
 *   - the state starts empty at each interval's start (the first touch of
 *     every line is a fill), and QEMU's page-table walker, DMA and
 *     instruction fetch are not data accesses here;
 *   - the order is that of the callbacks, which QEMU runs just after each
 *     access: a line handed back within the gap (under a microsecond) can
 *     lose a transfer (docs/bench.md).
 * Two vCPUs that ping-pong one line N times (each waits to see the other's
 * write, then writes) make 2N transfers: one load, one store per turn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "qemu-plugin-api.h"
#include "json_writer.h"
#include "pfcost.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT 6
#define PHYS_BITS 36			/* 64 GiB of guest physical address space */
#define NR_LINES (1UL << (PHYS_BITS - LINE_SHIFT))
#define DIRTY (1ULL << 63)		/* line state: bit v = vCPU v holds it */
#define MAX_VCPUS 63
#define HOT_SLOTS 8192			/* per vCPU: lines that transferred */

/*
 * The guest kernel's address map (x86-64 Linux, Documentation/x86/x86_64/
 * mm.rst; no KASLR, boot.sh: nokaslr): where the kernel half starts, the
 * direct map, vmalloc and vmemmap (base and size), the kernel image, and
 * sizeof(struct page). The bases and struct page come as arguments (from
 * the kernel's vmlinux, qemu/pfcost-layout); without them the defaults of
 * the paging level. Checked against the guest as it runs: every transfer
 * in the direct map must be at its physical address plus page_offset_base,
 * and none in the kernel half below its start; the record counts those
 * that are not ("layout": "misses").
 */
struct layout {
	int paging;
	uint64_t kernel_start, page_offset, direct_size, vmalloc, vmalloc_size;
	uint64_t vmemmap, vmemmap_size, image;
	uint64_t struct_page;
};
static const struct layout paging_layout[2] = {
	{ 4, 0xffff800000000000ULL, 0xffff888000000000ULL, 1ULL << 46,
	  0xffffc90000000000ULL, 1ULL << 45, 0xffffea0000000000ULL, 1ULL << 40,
	  0xffffffff80000000ULL, 64 },
	{ 5, 0xff00000000000000ULL, 0xff11000000000000ULL, 1ULL << 55,
	  0xffa0000000000000ULL, 0x32000000000000ULL, 0xffd4000000000000ULL, 1ULL << 49,
	  0xffffffff80000000ULL, 64 },
};
static struct layout map = paging_layout[0];
#define KERNEL_START	(map.kernel_start)
#define DIRECT_START	(map.page_offset)
#define DIRECT_END	(map.page_offset + map.direct_size)
#define VMALLOC_START	(map.vmalloc)
#define VMALLOC_END	(map.vmalloc + map.vmalloc_size)
#define VMEMMAP_START	(map.vmemmap)
#define VMEMMAP_END	(map.vmemmap + map.vmemmap_size)
#define IMAGE_START	(map.image)
#define STRUCT_PAGE_SIZE (map.struct_page)

/* Where a transferred line lives. */
enum data_class {
	D_USER, D_PERCPU, D_STATIC, D_STRUCT_PAGE, D_PAGE_DATA, D_DIRECT, D_VMALLOC,
	D_OTHER, NR_CLASSES
};
static const char *const class_name[NR_CLASSES] = {
	"user", "percpu", "static", "struct_page", "page_data", "direct_map",
	"vmalloc", "other_kernel"
};
/*
 * user: user addresses; percpu: %gs-relative accesses (this_cpu_*); static:
 * kernel image data (System.map symbol); struct_page: vmemmap; page_data:
 * direct-map accesses by clear_page*, copy_page*, copy_*user* (page
 * contents); direct_map: other direct-map accesses (slab, page tables,
 * per-CPU data reached by pointer); vmalloc: the vmalloc area (kernel
 * stacks); other_kernel: the rest.
 */

/* Symbols: System.map entries at kernel addresses, sorted by address. */
struct sym {
	uint64_t addr;
	char *name;
	unsigned char text, spin, page_data;
};
static struct sym *syms;
static size_t nr_syms;
static uint64_t image_end;		/* _end */
static uint64_t fault_entry;		/* exc_page_fault: one entry per page fault */
/* Code ids past the symbols: user code and kernel code outside the image. */
#define CODE_USER (nr_syms)
#define CODE_UNKNOWN (nr_syms + 1)
#define NR_CODES (nr_syms + 2)

/* What the translator learnt about a block and about an instruction. */
struct tb_info {
	uint32_t insns;
	uint32_t code;
	unsigned char user, spin, fault_entry;
};
struct insn_info {
	uint64_t pc;
	uint32_t code;
	unsigned char gs;		/* %gs segment prefix: per-CPU data */
};

struct hot_line {
	uint64_t line, vaddr;
	uint32_t code, count;
};

/* What a window counts, per vCPU (win_now()). */
enum { WIN_FAULTS, WIN_INSNS, WIN_SPIN, WIN_XFER, NR_WIN };
static const char *const win_name[NR_WIN] = { "page_faults", "insns", "spin", "transfers" };

/*
 * Per vCPU, written only by that vCPU's thread while an interval runs and
 * read by the marker's thread after counting stopped.
 */
struct vcpu {
	/* the arrays stay while start_interval() zeroes the rest */
	uint64_t *code_insns, *code_xfer, *data_xfer;	/* [NR_CODES] */
	struct hot_line *hot;
	uint64_t insns_user, insns_kernel, spin_user, spin_kernel;
	uint64_t faults;		/* entries to exc_page_fault */
	uint64_t fills, evicted;	/* lines fetched; of them, others' copies aged out */
	uint64_t loads, stores, rmw, atomics, io, out_of_range;
	uint64_t layout_misses;		/* transfers the address map does not fit */
	uint64_t xfer_load, xfer_store, xfer_store_dirty;
	uint64_t class_xfer[NR_CLASSES];
	uint64_t hot_overflow;
	/* the window: counts at its opening, and sums over the closed ones */
	uint64_t win_base[NR_WIN], win_sum[NR_WIN];
	/* a load waiting to see whether its instruction also stores the line */
	const struct insn_info *pend_insn;
	uint64_t pend_line, pend_vaddr;
} __attribute__((aligned(64)));

static struct vcpu *vcpus;
static int nr_vcpus;
static uint64_t *lines;			/* NR_LINES states, mapped lazily */
/* per line: (vCPU << STAMP_SHIFT) | its fills when it last filled or dirtied it */
static uint64_t *stamps;
#define STAMP_SHIFT 58
#define STAMP_MASK ((1ULL << STAMP_SHIFT) - 1)
static uint64_t cache_lines = (2048 << 10) >> LINE_SHIFT;	/* cache=KB, 0: infinite */
static int active;
static int window_open;			/* under marker_lock */
static unsigned long windows;		/* windows closed in this interval */
static double window_secs;
static double window_start;
static int list_windows;		/* windows=on */
static FILE *window_list;		/* this interval's, in memory */
static struct jw window_json;	/* its writer */
static char *window_list_buf;
static size_t window_list_len;
static uint64_t window_class_base[NR_CLASSES];
static unsigned long seq;
static double t_start;
static pthread_mutex_t marker_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static char *out_path;
static int top_n = 15, print_summary;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- symbols ---------------------------------------------------------- */

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int prefixed(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strncmp(s, *list, strlen(*list)))
			return 1;
	return 0;
}

/* Functions whose instructions are waiting, not work. */
static const char *const spin_names[] = {
	"native_queued_spin_lock_slowpath", "__pv_queued_spin_lock_slowpath",
	"queued_read_lock_slowpath", "queued_write_lock_slowpath",
	"rwsem_down_read_slowpath", "rwsem_down_write_slowpath",
	"rwsem_optimistic_spin", "osq_lock", "__spin_lock_debug",
	"smp_call_function_many_cond", "csd_lock_wait", NULL
};
/* Functions whose direct-map accesses are to page contents. */
static const char *const page_data_names[] = {
	"clear_page", "copy_page", "copy_user", "__copy_user", "copy_mc", "memset_orig",
	"rep_stos_alternative", NULL
};

static int load_map(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], name[256], type;
	uint64_t addr;
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "pfcost: cannot open map '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_end"))
			image_end = addr;
		if (!strcmp(name, "exc_page_fault"))
			fault_entry = addr;
		if (addr < KERNEL_START || type == 'a' || type == 'A')
			continue;
		if (nr_syms == cap) {
			cap = cap ? cap * 2 : 32768;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				return -1;
		}
		syms[nr_syms++] = (struct sym){
			.addr = addr, .name = strdup(name),
			.text = type == 't' || type == 'T' || type == 'w' || type == 'W',
			.spin = !strcmp(name, spin_names[0]) || prefixed(name, spin_names),
			.page_data = prefixed(name, page_data_names),
		};
	}
	fclose(f);
	if (!nr_syms || !image_end) {
		fprintf(stderr, "pfcost: '%s' has no kernel symbols or no _end: not a System.map\n",
			path);
		return -1;
	}
	qsort(syms, nr_syms, sizeof(*syms), sym_cmp);
	return 0;
}

/* Index of the symbol containing a kernel image address, or -1. */
static long sym_find(uint64_t addr)
{
	size_t lo = 0, hi = nr_syms;

	if (!nr_syms || addr < syms[0].addr || addr >= image_end)
		return -1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t code_of(uint64_t pc)
{
	long i;

	if (pc < KERNEL_START)
		return CODE_USER;
	i = sym_find(pc);
	return i < 0 ? CODE_UNKNOWN : (uint32_t)i;
}

static const char *code_name(size_t code)
{
	if (code == CODE_USER)
		return "user";
	if (code == CODE_UNKNOWN)
		return "kernel_unknown";
	return syms[code].name;
}

/* ---- translation: per-thread arena for what callbacks get as userdata ---- */

static void *arena_alloc(size_t size)
{
	static __thread char *cur, *end;
	void *p;

	size = (size + 15) & ~15UL;
	if (cur + size > end) {
		cur = malloc(1 << 20);
		if (!cur)
			abort();
		end = cur + (1 << 20);
	}
	p = cur;
	cur += size;
	return p;
}

static void marker(unsigned int vcpu, void *kind);
static void tb_exec(unsigned int vcpu, void *udata);
static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
		       void *udata);

/* A marker callback's udata: the marker's ModRM byte (bench/pfcost.h). */
#define MARKER_KIND(modrm) ((void *)(uintptr_t)(modrm))

static int has_gs_prefix(const unsigned char *b, size_t n)
{
	size_t i;

	/* legacy prefixes and REX come before the opcode */
	for (i = 0; i < n; i++) {
		switch (b[i]) {
		case 0x65:
			return 1;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64:
		case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
			continue;
		default:
			if ((b[i] & 0xf0) == 0x40)
				continue;
			return 0;
		}
	}
	return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t pc0 = qemu_plugin_tb_vaddr(tb);
	struct tb_info *t = arena_alloc(sizeof(*t));

	(void)id;
	t->insns = n;
	t->code = code_of(pc0);
	t->user = pc0 < KERNEL_START;
	t->spin = t->code < nr_syms && syms[t->code].spin;
	t->fault_entry = fault_entry && pc0 == fault_entry;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *b = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		struct insn_info *ii;

		if (pfcost_marker_of(b, len)) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker, QEMU_PLUGIN_CB_NO_REGS,
							       MARKER_KIND(pfcost_marker_of(b, len)));
			continue;
		}
		/* pause: a spin-wait loop (cpu_relax) */
		if (len >= 2 && b[len - 2] == 0xf3 && b[len - 1] == 0x90)
			t->spin = 1;
		ii = arena_alloc(sizeof(*ii));
		ii->pc = qemu_plugin_insn_vaddr(insn);
		ii->code = code_of(ii->pc);
		ii->gs = ii->pc >= KERNEL_START && has_gs_prefix(b, len);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, ii);
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

/* ---- execution ---------------------------------------------------------- */

static void tb_exec(unsigned int vcpu, void *udata)
{
	const struct tb_info *t = udata;
	struct vcpu *v;

	if (!__atomic_load_n(&active, __ATOMIC_RELAXED) || vcpu >= (unsigned int)nr_vcpus)
		return;
	v = &vcpus[vcpu];
	if (t->user) {
		v->insns_user += t->insns;
		if (t->spin)
			v->spin_user += t->insns;
	} else {
		v->insns_kernel += t->insns;
		if (t->spin)
			v->spin_kernel += t->insns;
	}
	v->code_insns[t->code] += t->insns;
	if (t->fault_entry)
		v->faults++;
}

static enum data_class classify(const struct insn_info *ii, uint64_t vaddr, long *sym)
{
	*sym = -1;
	if (vaddr < KERNEL_START)
		return D_USER;
	if (ii->gs)
		return D_PERCPU;
	if (vaddr >= IMAGE_START) {
		*sym = sym_find(vaddr);
		return *sym >= 0 ? D_STATIC : D_OTHER;
	}
	if (vaddr >= VMEMMAP_START && vaddr < VMEMMAP_END)
		return D_STRUCT_PAGE;
	if (vaddr >= DIRECT_START && vaddr < DIRECT_END)
		return ii->code < nr_syms && syms[ii->code].page_data ? D_PAGE_DATA : D_DIRECT;
	if (vaddr >= VMALLOC_START && vaddr < VMALLOC_END)
		return D_VMALLOC;
	return D_OTHER;
}

static void transfer(struct vcpu *v, const struct insn_info *ii, uint64_t line, uint64_t vaddr)
{
	enum data_class c;
	long sym;
	size_t h, i;

	c = classify(ii, vaddr, &sym);
	/* the map against the guest: the direct map is physical + page_offset */
	if (((c == D_DIRECT || c == D_PAGE_DATA) &&
	     (vaddr - DIRECT_START) >> LINE_SHIFT != line) ||
	    (c == D_USER && vaddr >> 63))
		v->layout_misses++;
	v->class_xfer[c]++;
	v->code_xfer[ii->code]++;
	if (sym >= 0)
		v->data_xfer[sym]++;
	h = (line * 0x9e3779b97f4a7c15ULL) >> 51;	/* 13 bits: HOT_SLOTS */
	for (i = 0; i < 16; i++) {
		struct hot_line *hl = &v->hot[(h + i) & (HOT_SLOTS - 1)];

		if (hl->count && hl->line != line)
			continue;
		if (!hl->count)
			*hl = (struct hot_line){ .line = line, .vaddr = vaddr, .code = ii->code };
		hl->count++;
		return;
	}
	v->hot_overflow++;
}

/* One access of one line by vCPU @vcpu under the coherence model above. */
/*
 * Whether the line's copies count as evicted: the vCPU that last filled or
 * dirtied it has filled more than cache_lines other lines since.
 */
static int stale(uint64_t line)
{
	uint64_t st = __atomic_load_n(&stamps[line], __ATOMIC_RELAXED);
	unsigned int last = st >> STAMP_SHIFT;

	return cache_lines && last < (unsigned int)nr_vcpus &&
	       vcpus[last].fills - (st & STAMP_MASK) > cache_lines;
}

static void line_access(unsigned int vcpu, struct vcpu *v, const struct insn_info *ii,
			uint64_t line, uint64_t vaddr, int store)
{
	uint64_t *slot = &lines[line], me = 1ULL << vcpu, s, new;
	int moved, old;

	s = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (store ? s == (me | DIRTY) : (s & me) != 0)
		return;			/* a hit */
	old = (s & ~me) && stale(line);
	do {
		if (store) {
			if (s == (me | DIRTY))
				return;
			moved = !old && (s & ~DIRTY & ~me) != 0;
			new = me | DIRTY;
		} else {
			if (s & me)
				return;
			moved = !old && (s & DIRTY) != 0;
			new = old ? me : (s & ~DIRTY) | me;
		}
	} while (!__atomic_compare_exchange_n(slot, &s, new, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	if (!(s & me))
		v->fills++;
	__atomic_store_n(&stamps[line], ((uint64_t)vcpu << STAMP_SHIFT) | (v->fills & STAMP_MASK),
			 __ATOMIC_RELAXED);
	if (old)
		v->evicted++;
	if (!moved)
		return;
	if (store) {
		v->xfer_store++;
		if (s & DIRTY)
			v->xfer_store_dirty++;
	} else {
		v->xfer_load++;
	}
	transfer(v, ii, line, vaddr);
}

static void flush_pending(unsigned int vcpu, struct vcpu *v)
{
	const struct insn_info *ii = v->pend_insn;

	v->pend_insn = NULL;
	line_access(vcpu, v, ii, v->pend_line, v->pend_vaddr, 0);
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
		       void *udata)
{
	const struct insn_info *ii = udata;
	struct qemu_plugin_hwaddr *hw;
	struct vcpu *v;
	uint64_t line;
	int store;

	if (!__atomic_load_n(&active, __ATOMIC_RELAXED) || vcpu >= (unsigned int)nr_vcpus)
		return;
	v = &vcpus[vcpu];
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw)) {
		v->io++;
		return;
	}
	line = qemu_plugin_hwaddr_phys_addr(hw) >> LINE_SHIFT;
	if (line >= NR_LINES) {
		v->out_of_range++;
		return;
	}
	store = qemu_plugin_mem_is_store(info);
	/*
	 * QEMU 7.2 reports an atomic RMW as one access with both R and W in
	 * the bits above the MemOpIdx (make_plugin_meminfo()); only counted.
	 */
	if ((info >> 16) == QEMU_PLUGIN_MEM_RW)
		v->atomics++;
	if (v->pend_insn) {
		if (store && v->pend_insn == ii && v->pend_line == line) {
			/* the load's instruction stores the line too: one RMW */
			v->pend_insn = NULL;
			v->loads--;
			v->rmw++;
			line_access(vcpu, v, ii, line, vaddr, 1);
			return;
		}
		flush_pending(vcpu, v);
	}
	if (store) {
		v->stores++;
		line_access(vcpu, v, ii, line, vaddr, 1);
	} else {
		v->loads++;
		v->pend_insn = ii;
		v->pend_line = line;
		v->pend_vaddr = vaddr;
	}
}

/* ---- intervals and the report ---------------------------------------------- */

static void start_interval(void)
{
	int i;

	/*
	 * Another vCPU may still be in a callback that saw the last interval
	 * active (pfcost_phase()): zero the counters, never the array pointers.
	 */
	for (i = 0; i < nr_vcpus; i++) {
		struct vcpu *v = &vcpus[i];

		memset(v->code_insns, 0, NR_CODES * sizeof(uint64_t));
		memset(v->code_xfer, 0, NR_CODES * sizeof(uint64_t));
		memset(v->data_xfer, 0, NR_CODES * sizeof(uint64_t));
		memset(v->hot, 0, HOT_SLOTS * sizeof(struct hot_line));
		memset(&v->insns_user, 0, sizeof(*v) - offsetof(struct vcpu, insns_user));
	}
	/* every line back to "held by nobody", and its memory back to the host */
	madvise(lines, NR_LINES * sizeof(*lines), MADV_DONTNEED);
	madvise(stamps, NR_LINES * sizeof(*stamps), MADV_DONTNEED);
	seq++;
	if (list_windows) {
		if (window_list)
			fclose(window_list);
		free(window_list_buf);
		window_list_buf = NULL;
		window_list = open_memstream(&window_list_buf, &window_list_len);
		if (!window_list) {
			fprintf(stderr, "pfcost: out of memory: windows=on dropped\n");
			list_windows = 0;
		} else {
			jw_init(&window_json, window_list, JW_COMPACT | JW_MEMBERS);
		}
	}
	window_open = 0;
	windows = 0;
	window_secs = 0;
	t_start = now();
	__atomic_store_n(&active, 1, __ATOMIC_RELEASE);
}

struct ranked {
	size_t idx;
	uint64_t n;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * The codes (or data symbols) with a count in the per-vCPU array at
 * @offset, by the sum over vCPUs, largest first; the caller frees *@r.
 */
static size_t rank_codes(size_t offset, struct ranked **r)
{
	size_t i, n = 0;
	int j;

	*r = calloc(NR_CODES, sizeof(**r));
	if (!*r)
		return 0;
	for (i = 0; i < NR_CODES; i++) {
		uint64_t sum = 0;

		for (j = 0; j < nr_vcpus; j++)
			sum += (*(uint64_t **)((char *)&vcpus[j] + offset))[i];
		if (sum)
			(*r)[n++] = (struct ranked){ i, sum };
	}
	qsort(*r, n, sizeof(**r), ranked_cmp);
	return n;
}

/* The top_n of rank_codes() as a JSON list @key of @j. */
static void put_top(struct jw *j, const char *key, size_t offset, int data)
{
	struct ranked *r;
	size_t k, n = rank_codes(offset, &r);

	jw_name(j, key);
	jw_start_array(j);
	for (k = 0; k < n && k < (size_t)top_n; k++) {
		jw_start_object(j);
		jw_string_field(j, data ? "sym" : "func", code_name(r[k].idx));
		jw_uint_field(j, "n", r[k].n);
		jw_end_object(j);
	}
	jw_end_array(j);
	free(r);
}

/* What a hot line is: its class and symbol+offset, or struct page's pfn. */
static void describe(const struct hot_line *hl, char *buf, size_t len, const char **cls)
{
	struct insn_info ii = { .code = hl->code };
	long sym;
	enum data_class c = classify(&ii, hl->vaddr, &sym);

	*cls = class_name[c];
	if (c == D_STATIC)
		snprintf(buf, len, "%s+0x%" PRIx64, syms[sym].name, hl->vaddr - syms[sym].addr);
	else if (c == D_STRUCT_PAGE)
		snprintf(buf, len, "struct page pfn 0x%" PRIx64,
			 (uint64_t)((hl->vaddr - VMEMMAP_START) / STRUCT_PAGE_SIZE));
	else
		snprintf(buf, len, "0x%" PRIx64, hl->vaddr);
}

static int hot_cmp(const void *a, const void *b)
{
	const struct hot_line *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 :
		(x->line > y->line) - (x->line < y->line);
}

static void put_hot_lines(struct jw *js)
{
	struct hot_line *all = calloc((size_t)nr_vcpus * HOT_SLOTS, sizeof(*all));
	size_t n = 0, i, k;
	int j;

	if (!all)
		return;
	/* merge the vCPUs' tables: one entry per line, counts added */
	for (j = 0; j < nr_vcpus; j++)
		for (i = 0; i < HOT_SLOTS; i++) {
			const struct hot_line *hl = &vcpus[j].hot[i];

			if (!hl->count)
				continue;
			for (k = 0; k < n && all[k].line != hl->line; k++)
				;
			if (k == n)
				all[n++] = *hl;
			else
				all[k].count += hl->count;
		}
	qsort(all, n, sizeof(*all), hot_cmp);
	jw_name(js, "hot_lines");
	jw_start_array(js);
	for (k = 0; k < n && k < (size_t)top_n; k++) {
		char what[320];
		const char *cls;

		describe(&all[k], what, sizeof(what), &cls);
		jw_start_object(js);
		jw_hex_field(js, "pa", all[k].line << LINE_SHIFT);
		jw_hex_field(js, "va", all[k].vaddr);
		jw_string_field(js, "class", cls);
		jw_string_field(js, "what", what);
		jw_string_field(js, "first_func", code_name(all[k].code));
		jw_uint_field(js, "n", all[k].count);
		jw_end_object(js);
	}
	jw_end_array(js);
	free(all);
}

/* The sum over vCPUs of the counter at @offset in struct vcpu. */
static uint64_t sum_at(size_t offset)
{
	uint64_t sum = 0;
	int j;

	for (j = 0; j < nr_vcpus; j++)
		sum += *(uint64_t *)((char *)&vcpus[j] + offset);
	return sum;
}
#define SUM(field) sum_at(offsetof(struct vcpu, field))

/* Transfers of data class @k so far, over all vCPUs. */
static uint64_t class_xfer_now(int k)
{
	return sum_at(offsetof(struct vcpu, class_xfer) + k * sizeof(uint64_t));
}

/* A "by_class" object of @cls[NR_CLASSES] in @j. */
static void put_classes(struct jw *j, const uint64_t *cls)
{
	int k;

	jw_name(j, "by_class");
	jw_start_object(j);
	for (k = 0; k < NR_CLASSES; k++)
		jw_uint_field(j, class_name[k], cls[k]);
	jw_end_object(j);
}

/* A window's "per_vcpu" array of @c[vCPU][NR_WIN] in @j. */
static void put_window_vcpus(struct jw *j, uint64_t (*c)[NR_WIN])
{
	int i, k;

	jw_name(j, "per_vcpu");
	jw_start_array(j);
	for (i = 0; i < nr_vcpus; i++) {
		jw_start_object(j);
		for (k = 0; k < NR_WIN; k++)
			jw_uint_field(j, win_name[k], c[i][k]);
		jw_end_object(j);
	}
	jw_end_array(j);
}

/* print=on: the interval in a few lines, per page fault when there were any. */
static void print_interval(uint64_t xfer, double secs)
{
	uint64_t faults = SUM(faults), insns = SUM(insns_user) + SUM(insns_kernel);
	char msg[1024];
	struct ranked *r;
	size_t k, n, len;

	snprintf(msg, sizeof(msg), "pfcost: interval %lu, %.2f s: %" PRIu64 " instructions (%"
		 PRIu64 " kernel, %" PRIu64 " spinning), %" PRIu64 " line transfers, %" PRIu64
		 " page faults\n", seq, secs, insns, SUM(insns_kernel),
		 SUM(spin_user) + SUM(spin_kernel), xfer, faults);
	qemu_plugin_outs(msg);
	if (faults) {
		snprintf(msg, sizeof(msg), "pfcost:   per page fault: %.0f instructions, %.2f line"
			 " transfers\n", (double)insns / faults, (double)xfer / faults);
		qemu_plugin_outs(msg);
	}
	n = rank_codes(offsetof(struct vcpu, code_xfer), &r);
	len = snprintf(msg, sizeof(msg), "pfcost:   top transfer sites:");
	for (k = 0; k < n && k < 4 && len < sizeof(msg); k++)
		len += snprintf(msg + len, sizeof(msg) - len, " %s %.0f%%", code_name(r[k].idx),
				100.0 * r[k].n / (xfer ? xfer : 1));
	free(r);
	len += snprintf(msg + len, sizeof(msg) - len, "; data:");
	for (k = 0; k < NR_CLASSES && len < sizeof(msg); k++) {
		uint64_t c = class_xfer_now(k);

		if (c * 20 >= xfer && c)	/* classes with 5% or more */
			len += snprintf(msg + len, sizeof(msg) - len, " %s %.0f%%", class_name[k],
					100.0 * c / xfer);
	}
	n = rank_codes(offsetof(struct vcpu, data_xfer), &r);
	if (n && len < sizeof(msg))
		len += snprintf(msg + len, sizeof(msg) - len, "; static:");
	for (k = 0; k < n && k < 3 && len < sizeof(msg); k++)
		len += snprintf(msg + len, sizeof(msg) - len, " %s %.0f%%", code_name(r[k].idx),
				100.0 * r[k].n / (xfer ? xfer : 1));
	free(r);
	if (len < sizeof(msg) - 1)
		strcpy(msg + len, "\n");
	qemu_plugin_outs(msg);
}

/*
 * A vCPU's counts now, read from the marker's thread while that vCPU runs:
 * each is one aligned word its own thread adds to, so at worst a few
 * instructions late.
 */
static void win_now(const struct vcpu *v, uint64_t *c)
{
	c[WIN_FAULTS] = __atomic_load_n(&v->faults, __ATOMIC_RELAXED);
	c[WIN_INSNS] = __atomic_load_n(&v->insns_user, __ATOMIC_RELAXED) +
		       __atomic_load_n(&v->insns_kernel, __ATOMIC_RELAXED);
	c[WIN_SPIN] = __atomic_load_n(&v->spin_user, __ATOMIC_RELAXED) +
		      __atomic_load_n(&v->spin_kernel, __ATOMIC_RELAXED);
	c[WIN_XFER] = __atomic_load_n(&v->xfer_load, __ATOMIC_RELAXED) +
		      __atomic_load_n(&v->xfer_store, __ATOMIC_RELAXED);
}

/*
 * windows=on: the window closing now, as one entry of window_list, from
 * @c, each vCPU's counts now (win_now()).
 */
static void list_window(double secs, uint64_t (*c)[NR_WIN])
{
	uint64_t cls[NR_CLASSES], own[MAX_VCPUS][NR_WIN], total = 0;
	int i, k;

	for (k = 0; k < NR_CLASSES; k++) {
		cls[k] = class_xfer_now(k) - window_class_base[k];
		total += cls[k];
	}
	for (i = 0; i < nr_vcpus; i++)
		for (k = 0; k < NR_WIN; k++)
			own[i][k] = c[i][k] - vcpus[i].win_base[k];
	jw_start_object(&window_json);
	jw_fixed_field(&window_json, "host_secs", secs, 6);
	jw_uint_field(&window_json, "transfers", total);
	put_classes(&window_json, cls);
	put_window_vcpus(&window_json, own);
	jw_end_object(&window_json);
}

/* A second opening restarts the window; a close without an opening is ignored. */
static void window_mark(int open)
{
	uint64_t c[MAX_VCPUS][NR_WIN];
	int i, k;

	if (!open && !window_open)
		return;
	for (i = 0; i < nr_vcpus; i++)
		win_now(&vcpus[i], c[i]);
	if (list_windows && open)
		for (k = 0; k < NR_CLASSES; k++)
			window_class_base[k] = class_xfer_now(k);
	else if (list_windows)
		list_window(now() - window_start, c);
	for (i = 0; i < nr_vcpus; i++) {
		struct vcpu *v = &vcpus[i];

		for (k = 0; k < NR_WIN; k++) {
			if (open)
				v->win_base[k] = c[i][k];
			else
				v->win_sum[k] += c[i][k] - v->win_base[k];
		}
	}
	if (open) {
		window_start = now();
	} else {
		window_secs += now() - window_start;
		windows++;
	}
	window_open = open;
}

/* The closed windows' sums, overall and per vCPU; a window left open is dropped. */
static void put_window(struct jw *j)
{
	uint64_t sums[MAX_VCPUS][NR_WIN];
	int i, k;

	jw_name(j, "window");
	jw_start_object(j);
	jw_uint_field(j, "windows", windows);
	jw_fixed_field(j, "host_secs", window_secs, 6);
	for (k = 0; k < NR_WIN; k++)
		jw_uint_field(j, win_name[k],
			      sum_at(offsetof(struct vcpu, win_sum) + k * sizeof(uint64_t)));
	for (i = 0; i < nr_vcpus; i++)
		memcpy(sums[i], vcpus[i].win_sum, sizeof(sums[i]));
	put_window_vcpus(j, sums);
	if (list_windows) {
		fflush(window_list);
		jw_name(j, "window_list");
		jw_start_array(j);
		if (window_list_len)
			jw_raw(j, window_list_buf, window_list_len);
		jw_end_array(j);
	}
	jw_end_object(j);
}

/* A record's sums over vCPUs: its key, and the struct vcpu field's offset. */
struct sum_member {
	const char *key;
	size_t offset;
};
#define SUM_MEMBER(key, field) { key, offsetof(struct vcpu, field) }
static const struct sum_member insn_sums[] = {
	SUM_MEMBER("user", insns_user), SUM_MEMBER("kernel", insns_kernel),
	SUM_MEMBER("spin_user", spin_user), SUM_MEMBER("spin_kernel", spin_kernel), { NULL, 0 }
};
static const struct sum_member access_sums[] = {
	SUM_MEMBER("loads", loads), SUM_MEMBER("stores", stores), SUM_MEMBER("rmw", rmw),
	SUM_MEMBER("atomic", atomics), SUM_MEMBER("io", io),
	SUM_MEMBER("out_of_range", out_of_range), { NULL, 0 }
};
static const struct sum_member transfer_sums[] = {
	SUM_MEMBER("load", xfer_load), SUM_MEMBER("store", xfer_store),
	SUM_MEMBER("store_from_dirty", xfer_store_dirty), SUM_MEMBER("hot_overflow", hot_overflow),
	SUM_MEMBER("fills", fills), SUM_MEMBER("aged_out", evicted), { NULL, 0 }
};

/* The sums of @m (up to its NULL key) as members of @j. */
static void put_members(struct jw *j, const struct sum_member *m)
{
	for (; m->key; m++)
		jw_uint_field(j, m->key, sum_at(m->offset));
}

/* An object @key of @j with the sums of @m. */
static void put_sums(struct jw *j, const char *key, const struct sum_member *m)
{
	jw_name(j, key);
	jw_start_object(j);
	put_members(j, m);
	jw_end_object(j);
}

/* The address map the record was counted with, and its misses. */
static void put_layout(struct jw *j)
{
	jw_name(j, "layout");
	jw_start_object(j);
	jw_int_field(j, "paging", map.paging);
	jw_hex_field(j, "page_offset_base", map.page_offset);
	jw_hex_field(j, "vmalloc_base", map.vmalloc);
	jw_hex_field(j, "vmemmap_base", map.vmemmap);
	jw_uint_field(j, "struct_page", map.struct_page);
	jw_uint_field(j, "misses", SUM(layout_misses));
	jw_end_object(j);
}

static void stop_interval(void)
{
	double secs;
	uint64_t xfer, cls[NR_CLASSES];
	struct jw j;
	int c;

	__atomic_store_n(&active, 0, __ATOMIC_RELEASE);
	secs = now() - t_start;
	/* a load still waiting on the marker's vCPU is dropped; so are the others' */
	xfer = SUM(xfer_load) + SUM(xfer_store);
	/* host_start: CLOCK_MONOTONIC seconds, to line runs up with host-side samples */
	jw_init(&j, out, JW_COMPACT);
	jw_start_object(&j);
	jw_uint_field(&j, "seq", seq);
	jw_int_field(&j, "vcpus", nr_vcpus);
	jw_fixed_field(&j, "host_start", t_start, 6);
	jw_fixed_field(&j, "host_secs", secs, 6);
	jw_uint_field(&j, "page_faults", SUM(faults));
	put_sums(&j, "insns", insn_sums);
	put_sums(&j, "accesses", access_sums);
	jw_name(&j, "transfers");
	jw_start_object(&j);
	jw_uint_field(&j, "total", xfer);
	put_members(&j, transfer_sums);
	jw_uint_field(&j, "cache_kb", (cache_lines << LINE_SHIFT) >> 10);
	jw_end_object(&j);
	for (c = 0; c < NR_CLASSES; c++)
		cls[c] = class_xfer_now(c);
	put_classes(&j, cls);
	put_layout(&j);
	jw_name(&j, "per_vcpu");
	jw_start_array(&j);
	for (c = 0; c < nr_vcpus; c++) {
		struct vcpu *v = &vcpus[c];

		jw_start_object(&j);
		jw_uint_field(&j, "insns_user", v->insns_user);
		jw_uint_field(&j, "insns_kernel", v->insns_kernel);
		jw_uint_field(&j, "transfers", v->xfer_load + v->xfer_store);
		jw_end_object(&j);
	}
	jw_end_array(&j);
	put_window(&j);
	put_top(&j, "top_insns", offsetof(struct vcpu, code_insns), 0);
	put_top(&j, "top_transfers", offsetof(struct vcpu, code_xfer), 0);
	put_top(&j, "top_data", offsetof(struct vcpu, data_xfer), 1);
	put_hot_lines(&j);
	jw_end_object(&j);
	if (print_summary)
		print_interval(xfer, secs);
}

static void marker(unsigned int vcpu, void *kind)
{
	(void)vcpu;
	pthread_mutex_lock(&marker_lock);
	if (kind == MARKER_KIND(PFCOST_WINDOW_OPEN) || kind == MARKER_KIND(PFCOST_WINDOW_CLOSE)) {
		if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
			window_mark(kind == MARKER_KIND(PFCOST_WINDOW_OPEN));
	} else if (__atomic_load_n(&active, __ATOMIC_ACQUIRE)) {
		stop_interval();
		if (kind == MARKER_KIND(PFCOST_PHASE))
			start_interval();
	} else {
		start_interval();
	}
	pthread_mutex_unlock(&marker_lock);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&marker_lock);
	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		fprintf(stderr, "pfcost: interval %lu never stopped: not reported\n", seq);
	fclose(out);
	pthread_mutex_unlock(&marker_lock);
}

/* ---- setup ---------------------------------------------------------------- */

static int bad_arg(const char *arg)
{
	fprintf(stderr, "pfcost: bad argument '%s' (out=FILE, map=FILE, top=N, cache=KB, print=on|off, windows=on|off, paging=4|5, page_offset_base=A, vmalloc_base=A, vmemmap_base=A, struct_page=N)\n",
		arg);
	return -1;
}

/* The address map's arguments, applied once paging= chose its defaults. */
static uint64_t arg_page_offset, arg_vmalloc, arg_vmemmap, arg_struct_page;

/* @val as a whole number (0x for hex) into *@to; nonzero if it is not one. */
static int parse_u64(const char *val, uint64_t *to)
{
	char *end;

	errno = 0;
	*to = strtoull(val, &end, 0);
	return !*val || *end || errno || !*to;
}

/* "on" or "off" into *@flag; nonzero if neither. */
static int parse_on_off(const char *val, int *flag)
{
	if (strcmp(val, "on") && strcmp(val, "off"))
		return 1;
	*flag = !strcmp(val, "on");
	return 0;
}

/* One argument KEY=VAL (@klen: KEY's length); nonzero if it is wrong. */
static int parse_arg(const char *key, size_t klen, const char *val, const char **map_path)
{
#define KEY(name) (klen == sizeof(name) - 1 && !strncmp(key, name, klen))
	char *end;
	long n;

	if (KEY("out") && *val)
		out_path = strdup(val);
	else if (KEY("map") && *val)
		*map_path = val;
	else if (KEY("top")) {
		top_n = strtol(val, &end, 10);
		return *end || top_n < 1 || top_n > 1000;
	} else if (KEY("cache")) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 0 || n > (1L << 30))
			return 1;
		cache_lines = ((uint64_t)n << 10) >> LINE_SHIFT;
	} else if (KEY("windows"))
		return parse_on_off(val, &list_windows);
	else if (KEY("print"))
		return parse_on_off(val, &print_summary);
	else if (KEY("paging")) {
		if (strcmp(val, "4") && strcmp(val, "5"))
			return 1;
		map = paging_layout[*val == '5'];
	} else if (KEY("page_offset_base"))
		return parse_u64(val, &arg_page_offset);
	else if (KEY("vmalloc_base"))
		return parse_u64(val, &arg_vmalloc);
	else if (KEY("vmemmap_base"))
		return parse_u64(val, &arg_vmemmap);
	else if (KEY("struct_page"))
		return parse_u64(val, &arg_struct_page) || arg_struct_page > 4096;
	else
		return 1;
	return 0;
#undef KEY
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *map_path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (parse_arg(argv[i], eq ? (size_t)(eq - argv[i]) : strlen(argv[i]),
			      eq ? eq + 1 : "", &map_path))
			return bad_arg(argv[i]);
	}
	if (arg_page_offset)
		map.page_offset = arg_page_offset;
	if (arg_vmalloc)
		map.vmalloc = arg_vmalloc;
	if (arg_vmemmap)
		map.vmemmap = arg_vmemmap;
	if (arg_struct_page)
		map.struct_page = arg_struct_page;
	if (!out_path) {
		fprintf(stderr, "pfcost: no out=FILE given\n");
		return -1;
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "pfcost: needs qemu-system-x86_64 (got %s%s)\n", info->target_name,
			info->system_emulation ? "" : ", user mode");
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	if (nr_vcpus < 1 || nr_vcpus > MAX_VCPUS) {
		fprintf(stderr, "pfcost: %d vCPUs: supports 1 to %d\n", nr_vcpus, MAX_VCPUS);
		return -1;
	}
	if (map_path && load_map(map_path))
		return -1;
	out = fopen(out_path, "w");
	if (!out) {
		fprintf(stderr, "pfcost: cannot write '%s': %s\n", out_path, strerror(errno));
		return -1;
	}
	/* 8 bytes per line of 64 GiB, reserved only: pages come on first touch */
	lines = mmap(NULL, NR_LINES * sizeof(*lines), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	stamps = mmap(NULL, NR_LINES * sizeof(*stamps), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	vcpus = aligned_alloc(64, nr_vcpus * sizeof(*vcpus));
	if (lines == MAP_FAILED || stamps == MAP_FAILED || !vcpus) {
		fprintf(stderr, "pfcost: out of memory\n");
		return -1;
	}
	memset(vcpus, 0, nr_vcpus * sizeof(*vcpus));
	for (i = 0; i < nr_vcpus; i++) {
		vcpus[i].code_insns = calloc(NR_CODES, sizeof(uint64_t));
		vcpus[i].code_xfer = calloc(NR_CODES, sizeof(uint64_t));
		vcpus[i].data_xfer = calloc(NR_CODES, sizeof(uint64_t));
		vcpus[i].hot = calloc(HOT_SLOTS, sizeof(struct hot_line));
		if (!vcpus[i].code_insns || !vcpus[i].code_xfer || !vcpus[i].data_xfer ||
		    !vcpus[i].hot) {
			fprintf(stderr, "pfcost: out of memory\n");
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
