/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfscale.so: a crash(8) extension that reads the pfscale figures out of
 * a vmcore (or live memory) of a pfscale-patched linux-source-6.1 kernel.
 *
 *   crash> extend build/pfscale.so
 *   crash> pfcounters [-j]             pfscale counters summed over CPUs
 *   crash> pfps [-j]                   pid, tgid, comm, mm of every task
 *   crash> pfrss [-j] PID              split RSS of PID's mm, as debugfs rss
 *   crash> pfpte [-j] PID START END    present PTE runs of PID in [START, END)
 *   crash> pfvma [-j] PID              PID's mm and VMAs, from its maple tree
 *
 * gdb's names are aliases: pf-counters, pf-rss, pf-range START END PID
 * (gdb's argument order), pf-mm; --json is -j.
 *
 * -j prints one JSON object with the keys of the gdb command's --json
 * (pf-counters, pf-rss, pf-range, pf-mm; docs/debuggers.md).
 *
 * crash 8.0.2 does not understand 6.1's task table (its ps shows only the
 * idle tasks, "vm PID" and "vtop -u" fail) and has no maple tree support,
 * so this extension walks init_task.tasks and each thread group's
 * signal->thread_head list itself, user page tables with physical reads
 * from mm->pgd, and mm->mm_mt from its root node.
 *
 * What it knows of the kernel's layout is in one table (struct
 * pfs_layout), filled once per session from the kernel's debug info and
 * tables: member offsets named struct_member (MEMBER_OFFSET, ANON_MEMBER_OFFSET
 * for members of anonymous unions) with their sizes, checked before each
 * read, enum values (enumerator_value: enum maple_type, the
 * MM counters), mt_slots[] and mt_pivots[], vmaflag_names[], the length of
 * swap_info[]; and the #defines, which have no debug info (page-table
 * and swap-entry bits, the swap types, the maple tree's node-pointer
 * encoding, the rwsem bits), from pfscale-layout: the "NAME VALUE" file
 * that scripts/layout.sh writes next to vmlinux when the kernel is built
 * (the directory of the vmlinux crash loaded; PFSCALE_LAYOUT=FILE
 * overrides; its names, the commands needing each and their bounds are
 * scripts/layout.def's). pfpte and pfvma need it and, without it, say in
 * one line how to make it; the other commands do not. What each field means follows
 * docs/debuggers.md's rules, as gdb-scripts/pfscale_gdb/decode.py does.
 *
 * The files, linked into one .so by the Makefile's rule (make
 * build/pfscale.so):
 *   pfscale.c       this: the command table
 *   layout.c        the layout table L, filled at the first command
 *   tasks.c         the task walk
 *   maple.c         the maple tree walk, with a visitor
 *   decode.c        the pure decode core (no crash headers; host-tested
 *                   with tests/vectors/decode.json, as decode.py is)
 *   json.c          the JSON writer of -j
 *   cmd_counters.c  pfcounters, pfps
 *   cmd_rss.c       pfrss
 *   cmd_pte.c       pfpte
 *   cmd_vma.c       pfvma
 */
#include "pfscale.h"

/* gdb's command names, as aliases of the crash ones (help: the crash one's text) */
static const struct { const char *alias, *name; } pfs_aliases[] = {
	{ "pf-counters", "pfcounters" }, { "pf-rss", "pfrss" }, { "pf-range", "pfpte" },
	{ "pf-mm", "pfvma" },
};
#define PFS_NR_ALIASES (sizeof(pfs_aliases) / sizeof(pfs_aliases[0]))

static struct command_table_entry command_table[5 + PFS_NR_ALIASES + 1] = {
	{ "pfcounters", cmd_pfcounters, help_pfcounters, 0 },
	{ "pfps", cmd_pfps, help_pfps, 0 },
	{ "pfrss", cmd_pfrss, help_pfrss, 0 },
	{ "pfpte", cmd_pfpte, help_pfpte, 0 },
	{ "pfvma", cmd_pfvma, help_pfvma, 0 },
};

void __attribute__((constructor, visibility("default"))) pfscale_init(void)
{
	size_t a, c;

	for (a = 0; a < PFS_NR_ALIASES; a++)
		for (c = 0; c < 5; c++)
			if (!strcmp(command_table[c].name, pfs_aliases[a].name)) {
				command_table[5 + a] = command_table[c];
				command_table[5 + a].name = (char *)pfs_aliases[a].alias;
			}
	register_extension(command_table);
	if (!symbol_exists("pfscale_counter_desc"))
		fprintf(fp, "pfscale.so: this kernel has no pfscale patches (no pfscale_counter_desc symbol): pfcounters will not work\n");
}

void __attribute__((destructor, visibility("default"))) pfscale_fini(void) { }
