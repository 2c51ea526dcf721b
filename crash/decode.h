/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure decode core of the crash extension: what a word of the kernel
 * means, with no crash headers, so that it builds as a host program too
 * (build/decode-vectors runs tests/vectors/decode.json through it, as
 * tests/host/vectors.py runs gdb-scripts/pfscale_gdb/decode.py; the two
 * must agree). Every rule here has its Python twin in decode.py; the
 * rules themselves are docs/debuggers.md's. What a kernel's #defines are
 * comes in as arguments (struct pfd_pte, struct pfd_rwsem, ...).
 */
#ifndef PFSCALE_DECODE_H
#define PFSCALE_DECODE_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t u64;

#define PFD_MAX_SWP_TYPES 64	/* 2^6: layout.def's bound of SWP_TYPE_BITS */
#define PFD_DENTRY_DEPTH 64	/* a corrupt d_parent chain must not loop */
#define PFD_MAX_MM_COUNTERS 64	/* the readers' buffers hold 64 */

/* Page-table entries: x86-64's bits, from pfscale-layout. */
struct pfd_pte {
	int page_shift, level_bits, swp_type_shift;
	u64 ptrs, present, pse, protnone, special, addr_mask;
};

/* The bits of a struct pfd_pte from the #define values. */
void pfd_pte_init(struct pfd_pte *p, u64 page_shift, u64 ptrs, u64 phys_mask_shift,
		  u64 bit_present, u64 bit_pse, u64 bit_protnone, u64 bit_special,
		  u64 swp_type_bits);

/* pte_present(): mapped, PROT_NONE included. */
int pfd_is_present(const struct pfd_pte *p, u64 e);
/* A present entry that maps a page: a pte, or a huge pmd/pud (shift). */
int pfd_is_leaf(const struct pfd_pte *p, u64 e, int shift);
/* The physical address an entry points to (PROT_NONE: inverted, L1TF). */
u64 pfd_entry_phys(const struct pfd_pte *p, u64 e, int shift);

/*
 * The swap types that are not swap files, allotted upwards from
 * MAX_SWAPFILES as include/linux/swap.h does. kind[t] is NULL for a swap
 * file's type. 0 if the numbers do not add up as swap.h says.
 */
struct pfd_swap_nums {
	u64 max_swapfiles, max_swapfiles_shift, swp_type_bits;
	u64 hwpoison, migration, device, pte_marker, swapin_error;
};
int pfd_swap_kinds(const struct pfd_swap_nums *n, const char *kind[PFD_MAX_SWP_TYPES]);
/* The kind of a non-present, non-none PTE ("swap" for the files' types). */
const char *pfd_swap_kind(const struct pfd_pte *p, const char *const kind[PFD_MAX_SWP_TYPES],
			  u64 e);

/*
 * A run: present pages contiguous both virtually and in PFN. The walk
 * calls emit for each finished run.
 */
struct pfd_run {
	u64 start, end, pfn;
	long leaves[3];		/* 4K, 2M, 1G leaves of the run */
	long special;		/* its _PAGE_SPECIAL ptes (no struct page) */
};
struct pfd_runs {
	struct pfd_run cur;
	u64 total;		/* pages */
	int page_shift;
	void (*emit)(const struct pfd_run *r, void *ctx);
	void *ctx;
};
void pfd_run_add(struct pfd_runs *w, u64 va, u64 pfn, u64 len, int level, int special);
void pfd_run_flush(struct pfd_runs *w);

/*
 * Walk [start, end) from the top table at physical pgd (levels 4 or 5),
 * reading entries with read(); the present leaves go to runs, the
 * non-present non-none PTEs are counted by swap type in not_present[].
 */
typedef int (*pfd_read_entry)(void *ctx, u64 table, int idx, u64 *e);
void pfd_walk_range(const struct pfd_pte *p, int levels, u64 pgd, u64 start, u64 end,
		    pfd_read_entry read, void *ctx, struct pfd_runs *runs,
		    long not_present[PFD_MAX_SWP_TYPES]);

/* A maple node's geometry: enum maple_type and the per-type tables. */
struct pfd_maple_geo {
	long dense, leaf_64, range_64, arange_64;	/* enum maple_type; -1 absent */
	unsigned char slots[8], pivots[8];		/* mt_slots[], mt_pivots[] */
	long r64_pivot, r64_slot, a64_pivot, a64_slot, dense_slot;	/* byte offsets */
	long node_size;
};
struct pfd_maple_slot {
	u64 first, last, entry;
};
enum pfd_maple_err {
	PFD_MAPLE_OK, PFD_MAPLE_BAD_TYPE, PFD_MAPLE_BAD_PIVOT,
};
/*
 * Decode a node (its node_size bytes as words) of type type covering
 * [min, max] into out[] (at most 32): its non-empty slots, as
 * mt_dump_node() reads them. *leaf: the slots are entries, else child
 * nodes. A pivot outside [first, max] stops the node (PFD_MAPLE_BAD_PIVOT,
 * *bad_slot its index), keeping the slots before it.
 */
int pfd_maple_node(const struct pfd_maple_geo *g, const u64 *words, long type, u64 min,
		   u64 max, struct pfd_maple_slot *out, int *nout, int *leaf, int *bad_slot);
/* The encoded node pointer's type and node address; xa_is_internal(). */
long pfd_maple_type(u64 enode, u64 type_shift, u64 type_mask);
int pfd_xa_is_internal(u64 entry);

/*
 * A walk of a whole tree from its ma_root, in index order, as
 * mt_dump() does: read() gives a node's node_size bytes (0: unreadable),
 * visit() each non-empty leaf slot (internal entries too: the visitor
 * decides), bad() what is wrong (what: "deep", "unreadable", "type",
 * "pivot@I", "nodes"), after which the walk goes on with the rest.
 */
#define PFD_MAPLE_MAX_NODES 65536	/* a corrupt tree must not loop */
struct pfd_maple_walk {
	const struct pfd_maple_geo *g;
	u64 node_mask, type_shift, type_mask, root_node, reserved_range, height_max;
	int (*read)(void *ctx, u64 node, u64 *words);
	void (*visit)(void *ctx, u64 entry, u64 first, u64 last);
	void (*bad)(void *ctx, const char *what, u64 node, u64 min, u64 max);
	void *ctx;
	long nodes, nbad;
};
void pfd_maple_walk(struct pfd_maple_walk *w, u64 root);

/* rw_semaphore count: "write-locked", "read-locked by N", "unlocked". */
struct pfd_rwsem {
	u64 writer_locked, waiters, handoff, reader_shift, reader_owned, owner_flags;
};
void pfd_rwsem_state(const struct pfd_rwsem *b, u64 count, char *state, size_t len);

/* Its flag names ("waiters", "handoff") into out: how many. */
int pfd_rwsem_flags(const struct pfd_rwsem *b, u64 count, const char *out[2]);

/* A qspinlock's val: "locked" if its locked byte is set. */
const char *pfd_qspin_state(uint32_t val);

/* get_mm_rss(): the MM counters in RSS, by their short names. */
int pfd_mm_in_rss(const char *name);
/*
 * An enumerator of the MM counters' enum (value below NR_MM_COUNTERS nr):
 * "MM_FILEPAGES" -> "filepages" into out; 0 if not an MM counter.
 */
int pfd_mm_counter(const char *enumerator, long value, long nr, char *out, size_t len);

/* The VMA flag values the readers use, by vmaflag_names[]'s names. */
struct pfd_vm_flags {
	u64 read, write, exec, mayshare;
	int found;		/* bits: which of the four a table named */
	const char *source;
};
void pfd_vm_flags_default(struct pfd_vm_flags *v);
void pfd_vm_flag_name(struct pfd_vm_flags *v, const char *name, u64 mask);
int pfd_vm_flags_complete(const struct pfd_vm_flags *v);
/* /proc/PID/maps's four letters into out[5]. */
void pfd_perms(const struct pfd_vm_flags *v, u64 flags, char out[5]);

/*
 * A dentry's path from its names leaf first (names[0] the dentry's own);
 * root: the last name is the filesystem's root's (d_parent == itself).
 */
void pfd_dentry_path(const char *const *names, int n, int root, char *out, size_t len);

#endif
