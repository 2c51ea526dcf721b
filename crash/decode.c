/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure decode core (decode.h): no crash headers, no memory reads but
 * through callbacks. gdb-scripts/pfscale_gdb/decode.py is its twin;
 * tests/vectors/decode.json holds both to the same answers.
 */
#include <stdio.h>
#include <string.h>

#include "decode.h"

void pfd_pte_init(struct pfd_pte *p, u64 page_shift, u64 ptrs, u64 phys_mask_shift,
		  u64 bit_present, u64 bit_pse, u64 bit_protnone, u64 bit_special,
		  u64 swp_type_bits)
{
	memset(p, 0, sizeof(*p));
	p->page_shift = (int)page_shift;
	p->ptrs = ptrs;
	/* every x86-64 table level has PTRS_PER_PTE entries */
	for (p->level_bits = 0; (1ULL << p->level_bits) < ptrs; p->level_bits++)
		;
	p->present = 1ULL << bit_present;
	p->pse = 1ULL << bit_pse;
	/* with PRESENT clear: PROT_NONE (the global bit, never in user PTEs) */
	p->protnone = 1ULL << bit_protnone;
	/* no struct page: not RSS */
	p->special = 1ULL << bit_special;
	/* PTE_PFN_MASK: PAGE_MASK & __PHYSICAL_MASK */
	p->addr_mask = ((1ULL << phys_mask_shift) - 1) & ~((1ULL << page_shift) - 1);
	/* a swap-format PTE keeps its type in its top SWP_TYPE_BITS */
	p->swp_type_shift = 64 - (int)swp_type_bits;
}

int pfd_is_present(const struct pfd_pte *p, u64 e)
{
	return (e & (p->present | p->protnone)) != 0;
}

int pfd_is_leaf(const struct pfd_pte *p, u64 e, int shift)
{
	return shift == p->page_shift ||
	       (shift <= p->page_shift + 2 * p->level_bits && (e & p->pse));
}

u64 pfd_entry_phys(const struct pfd_pte *p, u64 e, int shift)
{
	/* a PROT_NONE entry keeps its PFN inverted (L1TF) */
	if (e && !(e & p->present))
		e = ~e;
	return e & p->addr_mask & ~((1ULL << shift) - 1);
}

int pfd_swap_kinds(const struct pfd_swap_nums *n, const char *kind[PFD_MAX_SWP_TYPES])
{
	static const char *const mig[] = { "migration-read", "migration-read-exclusive",
					   "migration-write" };
	static const char *const dev[] = { "device-write", "device-read",
					   "device-exclusive-write", "device-exclusive-read" };
	/* swap.h's order upwards from MAX_SWAPFILES; the named groups are fixed */
	const struct {
		u64 num;
		const char *const *names;
		u64 nnames;
	} groups[] = {
		{ n->hwpoison, NULL, 0 },
		{ n->migration, mig, 3 },
		{ n->device, dev, 4 },
		{ n->pte_marker, NULL, 0 },
		{ n->swapin_error, NULL, 0 },
	};
	static const char *const one[] = { "hwpoison", NULL, NULL, "pte-marker", "swapin-error" };
	u64 t = n->max_swapfiles, i, g, sum = 0;

	for (g = 0; g < 5; g++) {
		/* swap.h has one of each, or the fixed groups, or none */
		if (groups[g].num > (groups[g].names ? groups[g].nnames : 1))
			return 0;
		sum += groups[g].num;
	}
	if (n->max_swapfiles_shift > n->swp_type_bits || n->swp_type_bits > 6 ||
	    n->max_swapfiles + sum != 1ULL << n->max_swapfiles_shift)
		return 0;
	memset(kind, 0, PFD_MAX_SWP_TYPES * sizeof(*kind));
	for (g = 0; g < 5; g++)
		for (i = 0; i < groups[g].num; i++)
			kind[t++] = groups[g].names ? groups[g].names[i] : one[g];
	return 1;
}

const char *pfd_swap_kind(const struct pfd_pte *p, const char *const kind[PFD_MAX_SWP_TYPES],
			  u64 e)
{
	u64 t = e >> p->swp_type_shift;

	return t < PFD_MAX_SWP_TYPES && kind[t] ? kind[t] : "swap";
}

void pfd_run_flush(struct pfd_runs *w)
{
	if (w->cur.end > w->cur.start && w->emit)
		w->emit(&w->cur, w->ctx);
	memset(&w->cur, 0, sizeof(w->cur));
}

void pfd_run_add(struct pfd_runs *w, u64 va, u64 pfn, u64 len, int level, int special)
{
	struct pfd_run *r = &w->cur;

	if (r->end == r->start || va != r->end ||
	    pfn != r->pfn + ((r->end - r->start) >> w->page_shift)) {
		pfd_run_flush(w);
		r->start = r->end = va;
		r->pfn = pfn;
	}
	r->special += special;
	r->end += len;
	r->leaves[level]++;
	w->total += len >> w->page_shift;
}

/* One address's walk from the top: the next address to look at. */
static u64 pfd_walk_one(const struct pfd_pte *p, int levels, u64 pgd, u64 va, u64 end,
			pfd_read_entry read, void *ctx, struct pfd_runs *runs,
			long not_present[PFD_MAX_SWP_TYPES])
{
	u64 table = pgd, e = 0, page = 1ULL << p->page_shift;
	int level;

	for (level = 0; level < levels; level++) {
		/* the bits of va that index this level's table */
		int shift = p->page_shift + p->level_bits * (levels - 1 - level);
		u64 size = 1ULL << shift, next = (va & ~(size - 1)) + size;
		int idx = (int)((va >> shift) & (p->ptrs - 1));
		int ok = read(ctx, table, idx, &e);

		if (!ok || !pfd_is_present(p, e)) {
			if (ok && e && shift == p->page_shift)
				not_present[e >> p->swp_type_shift]++;
			return next;
		}
		if (pfd_is_leaf(p, e, shift)) {
			u64 pa = pfd_entry_phys(p, e, shift) + (va & (size - 1));

			/* an end inside a page takes that page, as pagemap does */
			if (next > end)
				next = (end + page - 1) & ~(page - 1);
			pfd_run_add(runs, va, pa >> p->page_shift, next - va, (shift - p->page_shift) /
				    p->level_bits, shift == p->page_shift && (e & p->special));
			return next;
		}
		table = pfd_entry_phys(p, e, p->page_shift);
	}
	return va + page;
}

void pfd_walk_range(const struct pfd_pte *p, int levels, u64 pgd, u64 start, u64 end,
		    pfd_read_entry read, void *ctx, struct pfd_runs *runs,
		    long not_present[PFD_MAX_SWP_TYPES])
{
	u64 va = start & ~((1ULL << p->page_shift) - 1);

	runs->page_shift = p->page_shift;
	while (va < end) {
		u64 next = pfd_walk_one(p, levels, pgd, va, end, read, ctx, runs, not_present);

		if (next <= va)		/* the top of the address space */
			break;
		va = next;
	}
	pfd_run_flush(runs);
}

long pfd_maple_type(u64 enode, u64 type_shift, u64 type_mask)
{
	return (long)((enode >> type_shift) & type_mask);
}

int pfd_xa_is_internal(u64 entry)
{
	return (entry & 3) == 2;
}

/* A dense node: slot i is index min + i. */
static int pfd_maple_dense(const struct pfd_maple_geo *g, const u64 *words, u64 min, u64 max,
			   struct pfd_maple_slot *out, int *nout)
{
	const u64 *slot = words + g->dense_slot / 8;
	int i, n = g->slots[g->dense];

	if (g->dense_slot / 8 + n > g->node_size / 8)
		return PFD_MAPLE_BAD_TYPE;
	for (i = 0; i < n && (u64)i <= max - min; i++)
		if (slot[i]) {
			out[*nout].first = out[*nout].last = min + i;
			out[(*nout)++].entry = slot[i];
		}
	return PFD_MAPLE_OK;
}

int pfd_maple_node(const struct pfd_maple_geo *g, const u64 *words, long type, u64 min,
		   u64 max, struct pfd_maple_slot *out, int *nout, int *leaf, int *bad_slot)
{
	const u64 *pivot, *slot;
	u64 first = min;
	int i, nslots, npivots;

	*nout = 0;
	*bad_slot = -1;
	*leaf = type == g->leaf_64 || type == g->dense;
	if (type < 0 || type >= 8 || g->slots[type] > 32)
		return PFD_MAPLE_BAD_TYPE;
	if (type == g->dense)
		return pfd_maple_dense(g, words, min, max, out, nout);
	if (type == g->leaf_64 || type == g->range_64) {
		pivot = words + g->r64_pivot / 8;
		slot = words + g->r64_slot / 8;
	} else if (type == g->arange_64) {
		pivot = words + g->a64_pivot / 8;
		slot = words + g->a64_slot / 8;
	} else {
		return PFD_MAPLE_BAD_TYPE;
	}
	nslots = g->slots[type];
	npivots = g->pivots[type];
	/* a geometry that reaches past the node is no node's */
	if ((long)((const u64 *)slot - words) + nslots > g->node_size / 8 ||
	    (long)((const u64 *)pivot - words) + npivots > g->node_size / 8)
		return PFD_MAPLE_BAD_TYPE;
	for (i = 0; i < nslots; i++) {
		u64 last = max;

		if (i < npivots)
			last = pivot[i];
		else if (!slot[i])	/* range_64's last slot may hold the metadata */
			break;
		if (last == 0 && i > 0)
			break;
		/* mas_validate_limits(): pivots rise and stay within the node */
		if (last < first || last > max) {
			*bad_slot = i;
			return PFD_MAPLE_BAD_PIVOT;
		}
		if (slot[i]) {
			out[*nout].first = first;
			out[*nout].last = last;
			out[(*nout)++].entry = slot[i];
		}
		if (last == max)
			break;
		first = last + 1;
	}
	return PFD_MAPLE_OK;
}

static void pfd_maple_bad(struct pfd_maple_walk *w, const char *what, u64 node, u64 min,
			  u64 max)
{
	w->nbad++;
	if (w->bad)
		w->bad(w->ctx, what, node, min, max);
}

static void pfd_maple_walk_node(struct pfd_maple_walk *w, u64 enode, u64 min, u64 max,
				u64 depth)
{
	u64 words[1024 / 8], node = enode & ~w->node_mask;
	struct pfd_maple_slot slots[32];
	int n, leaf, bad, i, err;

	if (depth > w->height_max) {
		pfd_maple_bad(w, "deep", node, min, max);
		return;
	}
	if (w->nodes >= PFD_MAPLE_MAX_NODES) {
		pfd_maple_bad(w, "nodes", node, min, max);
		return;
	}
	memset(words, 0, sizeof(words));
	if (w->g->node_size <= 0 || w->g->node_size > (long)sizeof(words) ||
	    !w->read(w->ctx, node, words)) {
		pfd_maple_bad(w, "unreadable", node, min, max);
		return;
	}
	w->nodes++;
	err = pfd_maple_node(w->g, words, pfd_maple_type(enode, w->type_shift, w->type_mask),
			     min, max, slots, &n, &leaf, &bad);
	if (err == PFD_MAPLE_BAD_TYPE) {
		pfd_maple_bad(w, "type", node, min, max);
		return;
	}
	for (i = 0; i < n; i++)
		if (leaf)
			w->visit(w->ctx, slots[i].entry, slots[i].first, slots[i].last);
		else
			pfd_maple_walk_node(w, slots[i].entry, slots[i].first, slots[i].last,
					    depth + 1);
	if (err == PFD_MAPLE_BAD_PIVOT) {
		char what[16];

		snprintf(what, sizeof(what), "pivot@%d", bad);
		pfd_maple_bad(w, what, node, min, max);
	}
}

void pfd_maple_walk(struct pfd_maple_walk *w, u64 root)
{
	w->nodes = w->nbad = 0;
	/* xa_is_node(): an internal entry above MAPLE_RESERVED_RANGE */
	if (root > w->reserved_range && pfd_xa_is_internal(root))
		pfd_maple_walk_node(w, root & ~w->root_node, 0, ~0ULL, 1);
	else if (root)		/* a single entry at index 0, no node */
		w->visit(w->ctx, root, 0, 0);
}

void pfd_rwsem_state(const struct pfd_rwsem *b, u64 count, char *state, size_t len)
{
	/* kernel/locking/rwsem.c: readers from RWSEM_READER_SHIFT up to bit 62 */
	u64 readers = (count & ~(1ULL << 63)) >> b->reader_shift;

	if (count & b->writer_locked)
		snprintf(state, len, "write-locked");
	else if (readers)
		snprintf(state, len, "read-locked by %llu", (unsigned long long)readers);
	else
		snprintf(state, len, "unlocked");
}

int pfd_rwsem_flags(const struct pfd_rwsem *b, u64 count, const char *out[2])
{
	int n = 0;

	if (count & b->waiters)
		out[n++] = "waiters";
	if (count & b->handoff)
		out[n++] = "handoff";
	return n;
}

const char *pfd_qspin_state(uint32_t val)
{
	/* _Q_LOCKED_MASK: the locked byte, which the owner holds */
	return val & 0xff ? "locked" : "unlocked";
}

int pfd_mm_in_rss(const char *name)
{
	/* get_mm_rss(): MM_FILEPAGES + MM_ANONPAGES + MM_SHMEMPAGES */
	return !strcmp(name, "filepages") || !strcmp(name, "anonpages") ||
	       !strcmp(name, "shmempages");
}

int pfd_mm_counter(const char *enumerator, long value, long nr, char *out, size_t len)
{
	size_t i;

	/* enum { MM_FILEPAGES, ..., NR_MM_COUNTERS }: the MM_ ones below NR */
	if (strncmp(enumerator, "MM_", 3) || !enumerator[3] || len < 2 || value < 0 ||
	    value >= nr)
		return 0;
	for (i = 0; enumerator[3 + i] && i < len - 1; i++) {
		char c = enumerator[3 + i];

		out[i] = c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
	}
	out[i] = 0;
	return 1;
}

void pfd_vm_flags_default(struct pfd_vm_flags *v)
{
	/* include/linux/mm.h's values, which have not changed since 2.6 */
	v->read = 0x1, v->write = 0x2, v->exec = 0x4, v->mayshare = 0x80;
	v->found = 0;
	v->source = "include/linux/mm.h";
}

void pfd_vm_flag_name(struct pfd_vm_flags *v, const char *name, u64 mask)
{
	static const char *const names[] = { "read", "write", "exec", "mayshare" };
	u64 *vals[] = { &v->read, &v->write, &v->exec, &v->mayshare };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*vals[i] = mask;
			v->found |= 1 << i;
		}
	if (pfd_vm_flags_complete(v))
		v->source = "vmaflag_names[]";
}

int pfd_vm_flags_complete(const struct pfd_vm_flags *v)
{
	return v->found == 0xf;
}

void pfd_perms(const struct pfd_vm_flags *v, u64 flags, char out[5])
{
	out[0] = flags & v->read ? 'r' : '-';
	out[1] = flags & v->write ? 'w' : '-';
	out[2] = flags & v->exec ? 'x' : '-';
	/* a MAP_SHARED mapping of a read-only file: VM_MAYSHARE, not VM_SHARED */
	out[3] = flags & v->mayshare ? 's' : 'p';
	out[4] = 0;
}

void pfd_dentry_path(const char *const *names, int n, int root, char *out, size_t len)
{
	int i;

	out[0] = 0;
	/* the root's name ("/") is not in the path, but shmem's ("dev/zero") alone is */
	if (root && n > 1)
		n--;
	if (n > PFD_DENTRY_DEPTH)
		n = PFD_DENTRY_DEPTH;
	for (i = n - 1; i >= 0; i--) {
		const char *s = names[i];

		while (*s == '/')
			s++;
		snprintf(out + strlen(out), len - strlen(out), "/%s", s);
	}
	if (!out[0])
		snprintf(out, len, "/");
}
