/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A maple tree walk with a visitor, as crash's own maple_tree.c has one
 * (crash 8.0.2 has none): the pure core's walk (pfd_maple_walk(), which
 * the golden vectors test) with readmem() as its reader; each leaf entry
 * goes to w->fn with the index range it covers. Node geometry is the kernel's (mt_slots[],
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

static int pfs_maple_read(void *ctx, u64 node, u64 *words)
{
	return readmem(node, KVADDR, words, L.maple.node_size, "maple_node",
		       RETURN_ON_ERROR | QUIET);
}

static void pfs_maple_visit(void *ctx, u64 entry, u64 first, u64 last)
{
	struct pfs_maple_walk *w = ctx;

	w->fn(entry, first, last, w->ctx);
}

/* What is wrong, in one INFO line (unless w->quiet). */
static void pfs_maple_bad(void *ctx, const char *what, u64 node, u64 min, u64 max)
{
	struct pfs_maple_walk *w = ctx;

	if (w->quiet)
		return;
	if (!strcmp(what, "deep"))
		error(INFO, "maple tree deeper than %lu at node %llx\n",
		      PFS_DEF(MAPLE_HEIGHT_MAX), (ulonglong)node);
	else if (!strcmp(what, "nodes"))
		error(INFO, "more than %d maple nodes: corrupt or changing\n",
		      PFD_MAPLE_MAX_NODES);
	else if (!strcmp(what, "unreadable"))
		error(INFO, "cannot read maple node %llx\n", (ulonglong)node);
	else if (!strcmp(what, "type"))
		error(INFO, "maple node %llx: not a maple_type it knows\n", (ulonglong)node);
	else
		error(INFO, "maple node %llx: %s below the one before or outside [%llx, %llx]\n",
		      (ulonglong)node, what, (ulonglong)min, (ulonglong)max);
}

/* Walk the tree whose ma_root is root: w->fn for each leaf entry. */
void pfs_maple_walk(struct pfs_maple_walk *w, ulong root)
{
	struct pfd_maple_walk pw = {
		&L.maple, PFS_DEF(MAPLE_NODE_MASK), PFS_DEF(MAPLE_NODE_TYPE_SHIFT),
		PFS_DEF(MAPLE_NODE_TYPE_MASK), PFS_DEF(MAPLE_ROOT_NODE),
		PFS_DEF(MAPLE_RESERVED_RANGE), PFS_DEF(MAPLE_HEIGHT_MAX),
		pfs_maple_read, pfs_maple_visit, pfs_maple_bad, w, 0, 0,
	};

	pfd_maple_walk(&pw, root);
	w->nodes = pw.nodes;
	w->bad = pw.nbad;
}
