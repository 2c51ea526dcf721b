/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A maple tree walk with a visitor, as crash's own maple_tree.c has one
 * (crash 8.0.2 has none): each node is read in one piece and decoded by
 * the pure core (pfd_maple_node()); each leaf entry goes to w->fn with
 * the index range it covers. Node geometry is the kernel's (mt_slots[],
 * mt_pivots[], enum maple_type: L.maple), the node-pointer encoding its
 * #defines (pfscale-layout). What is wrong is counted in w->bad and said
 * in an INFO line unless w->quiet; the walk goes on with the rest.
 */
#include "pfscale.h"

/* The tree's height, as mt_height() reads it from its ma_flags. */
uint pfs_maple_height(uint ma_flags)
{
	return (uint)((ma_flags & PFS_DEF(MT_FLAGS_HEIGHT_MASK)) >> PFS_DEF(MT_FLAGS_HEIGHT_OFFSET));
}

static void __attribute__((format(printf, 2, 3))) pfs_maple_bad(struct pfs_maple_walk *w,
								 const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	w->bad++;
	if (w->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error(INFO, "%s\n", msg);
}

/* Walk the node enode covering [min, max], in order, as mt_dump_node() does. */
static void pfs_maple_node(struct pfs_maple_walk *w, ulong enode, ulong min, ulong max,
			   int depth)
{
	ulong words[1024 / sizeof(ulong)];
	struct pfd_maple_slot slots[32];
	/* an encoded node pointer: the type in its low MAPLE_NODE_MASK bits */
	ulong node = enode & ~PFS_DEF(MAPLE_NODE_MASK);
	long type = pfd_maple_type(enode, PFS_DEF(MAPLE_NODE_TYPE_SHIFT),
				   PFS_DEF(MAPLE_NODE_TYPE_MASK));
	int n, leaf, bad, i, err;

	if (depth > (int)PFS_DEF(MAPLE_HEIGHT_MAX)) {
		pfs_maple_bad(w, "maple tree deeper than %lu at node %lx",
			      PFS_DEF(MAPLE_HEIGHT_MAX), node);
		return;
	}
	if (L.maple.node_size <= 0 || L.maple.node_size > (long)sizeof(words) ||
	    !readmem(node, KVADDR, words, L.maple.node_size, "maple_node", RETURN_ON_ERROR)) {
		pfs_maple_bad(w, "cannot read maple node %lx", node);
		return;
	}
	w->nodes++;
	err = pfd_maple_node(&L.maple, (u64 *)words, type, min, max, slots, &n, &leaf, &bad);
	if (err == PFD_MAPLE_BAD_TYPE) {
		pfs_maple_bad(w, "maple node %lx has type %ld: not a maple_type", node, type);
		return;
	}
	for (i = 0; i < n; i++)
		if (leaf)
			w->fn(slots[i].entry, slots[i].first, slots[i].last, w->ctx);
		else
			pfs_maple_node(w, slots[i].entry, slots[i].first, slots[i].last,
				       depth + 1);
	if (err == PFD_MAPLE_BAD_PIVOT)
		pfs_maple_bad(w, "maple node %lx: pivot %d below the one before or outside "
			      "[%lx, %lx]", node, bad, min, max);
}

/*
 * Walk the tree whose ma_root is root: a node (xa_is_node(): an internal
 * entry above MAPLE_RESERVED_RANGE), or a single entry at index 0.
 */
void pfs_maple_walk(struct pfs_maple_walk *w, ulong root)
{
	w->nodes = w->bad = 0;
	if (root > PFS_DEF(MAPLE_RESERVED_RANGE) && pfd_xa_is_internal(root))
		pfs_maple_node(w, root & ~PFS_DEF(MAPLE_ROOT_NODE), 0, ~0UL, 1);
	else if (root)
		w->fn(root, 0, 0, w->ctx);
}
