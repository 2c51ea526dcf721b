/* SPDX-License-Identifier: GPL-2.0 */
/* pfpte (gdb's pf-range): the present runs of a range of user addresses. */
#include "pfscale.h"

char *help_pfpte[] = {
	"pfpte",
	"present page runs of a process's user page tables",
	"[-j] pid start end",
	"  Walks the x86_64 page tables of pid's mm from mm->pgd, with physical",
	"  reads, over the user addresses [start, end) (hex): 4 levels, or 5 when",
	"  the kernel's __pgtable_l5_enabled (CONFIG_X86_5LEVEL) is set, and",
	"  prints each run of present pages, contiguous both virtually and in",
	"  PFN (PROT_NONE pages are present, as pte_present() says):",
	"    START-END pfn FIRST-LAST pages N [2M xK]",
	"  then the total, and the PTEs that are neither present nor none by",
	"  kind (swap entries of swap files, migration, pte-marker such as a PTE",
	"  parked by the pfscale atomic path, hwpoison, device, swapin-error):",
	"    total N",
	"    not_present KIND N",
	"  It does not need crash's task table (vtop -u does, and fails on 6.1).",
	"  The PTE bits, page and swap-entry layout and swap types are the",
	"  kernel's #defines, read from pfscale-layout next to vmlinux (or",
	"  $PFSCALE_LAYOUT), which scripts/layout.sh writes at kernel build time.",
	"  pf-range START END PID is the same command, with gdb's name and order.",
	"    -j  one JSON object with the keys of gdb's pf-range --json: pid,",
	"        start, end, levels, runs [{start, end, pfn, pages, leaves,",
	"        special (its _PAGE_SPECIAL pages: the zero page, PFN maps)}],",
	"        present_pages, not_present {KIND: N}",
	"\nEXAMPLE",
	"  %s> pfpte 70 400000 500000",
	"  400000-403000 pfn 3c0a1-3c0a3 pages 3",
	"  total 3",
	NULL
};

static const char *pfs_leaf_names[3] = { "4K", "2M", "1G" };

/* A finished run, as text or as one object of "runs" (ctx: the writer or NULL). */
static void pfs_run_print(const struct pfd_run *r, void *ctx)
{
	struct jw *w = ctx;
	ulong pages = (r->end - r->start) >> PFS_DEF(PAGE_SHIFT);
	int i, n = 0;

	if (w) {
		jw_start_object(w);
		jw_hex_field(w, "start", r->start);
		jw_hex_field(w, "end", r->end);
		jw_uint_field(w, "pfn", r->pfn);
		jw_uint_field(w, "pages", pages);
		jw_name(w, "leaves");
		jw_start_object(w);
		for (i = 0; i < 3; i++)
			if (r->leaves[i])
				jw_int_field(w, pfs_leaf_names[i], r->leaves[i]);
		jw_end_object(w);
		jw_int_field(w, "special", r->special);
		jw_end_object(w);
		return;
	}
	fprintf(fp, "%llx-%llx pfn %llx-%llx pages %lu", (ulonglong)r->start,
		(ulonglong)r->end, (ulonglong)r->pfn, (ulonglong)r->pfn + pages - 1, pages);
	for (i = 2; i > 0; i--)
		if (r->leaves[i])
			fprintf(fp, "%s%s x%ld", n++ ? ", " : " ", pfs_leaf_names[i], r->leaves[i]);
	fprintf(fp, "\n");
}

static int pfs_read_entry(void *ctx, u64 table, int idx, u64 *e)
{
	return readmem(table + idx * 8, PHYSADDR, e, sizeof(*e), "page table entry",
		       RETURN_ON_ERROR);
}

/* The not-present counts by kind ("swap" for the swap files' types), in type order. */
static void pfs_not_present(struct jw *w, const long *by_type)
{
	const char *kinds[PFD_MAX_SWP_TYPES] = { NULL };
	long counts[PFD_MAX_SWP_TYPES];
	int t, k, n = 0;

	for (t = 0; t < PFD_MAX_SWP_TYPES; t++) {
		const char *kind = L.swap_kind[t] ? L.swap_kind[t] : "swap";

		if (!by_type[t])
			continue;
		for (k = 0; k < n && strcmp(kinds[k], kind); k++)
			;
		if (k == n) {
			kinds[n] = kind;
			counts[n++] = 0;
		}
		counts[k] += by_type[t];
	}
	if (w) {
		jw_name(w, "not_present");
		jw_start_object(w);
	}
	for (k = 0; k < n; k++) {
		if (w)
			jw_int_field(w, kinds[k], counts[k]);
		else
			fprintf(fp, "not_present %s %ld\n", kinds[k], counts[k]);
	}
	if (w)
		jw_end_object(w);
}

/* The pid and range of pfpte (PID START END) or pf-range (START END PID). */
static void pfs_pte_args(int first, struct pfs_task *t, ulong *start, ulong *end)
{
	int gdb_order = !strcmp(args[0], "pf-range"), err = 0;
	char *pid = args[gdb_order ? first + 2 : first];
	char *s = args[gdb_order ? first : first + 1], *e = args[gdb_order ? first + 1 : first + 2];

	*start = htol(s, RETURN_ON_ERROR | QUIET, &err);
	*end = err ? 0 : htol(e, RETURN_ON_ERROR | QUIET, &err);
	/* user space: the lower half of what the top level maps (2^47, 2^56) */
	if (err || *start >= *end ||
	    *end > 1UL << (PFS_DEF(PAGE_SHIFT) + L.pte.level_bits * L.levels - 1))
		error(FATAL, "bad range %s %s (hex user addresses, start < end)\n", s, e);
	pfs_lookup(pid, t);
}

void cmd_pfpte(void)
{
	struct pfs_task t;
	struct pfd_runs runs;
	struct jw w;
	long not_present[PFD_MAX_SWP_TYPES] = { 0 };
	ulong start, end, pgd = 0;
	int json, first = pfs_options(&json);

	if (first != argcnt - 3)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_PTE);
	pfs_pte_args(first, &t, &start, &end);
	PFS_READ(t.mm, mm_struct_pgd, pgd, FAULT_ON_ERROR);
	memset(&runs, 0, sizeof(runs));
	runs.emit = pfs_run_print;
	if (json) {
		jw_init(&w, fp, JW_SPACED);
		runs.ctx = &w;
		jw_start_object(&w);
		jw_int_field(&w, "pid", t.pid);
		jw_hex_field(&w, "start", start);
		jw_hex_field(&w, "end", end);
		jw_int_field(&w, "levels", L.levels);
		jw_name(&w, "runs");
		jw_start_array(&w);
	}
	pfd_walk_range(&L.pte, L.levels, VTOP(pgd), start, end, pfs_read_entry, NULL, &runs,
		       not_present);
	if (!json) {
		fprintf(fp, "total %llu\n", (ulonglong)runs.total);
		pfs_not_present(NULL, not_present);
		return;
	}
	jw_end_array(&w);
	jw_uint_field(&w, "present_pages", runs.total);
	pfs_not_present(&w, not_present);
	jw_end_object(&w);
}
