/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layout table (struct pfs_layout L), filled at the first command
 * that needs it: member offsets and sizes from the kernel's debug info,
 * enum values, the kernel's own tables (mt_slots[], mt_pivots[],
 * vmaflag_names[]), and the #defines from pfscale-layout (see pfscale.c).
 */
#include "pfscale.h"

struct pfs_layout L;

static const struct pfs_member_desc {
	const char *s, *m, *name;	/* name: "struct.member" for messages */
	int need;
} pfs_members[PFS_NR_MEMBERS] = {
#define PFS_MEMBER_DESC(s, m, need) { #s, #m, #s "." #m, need },
	PFS_MEMBERS(PFS_MEMBER_DESC)
#undef PFS_MEMBER_DESC
};

enum { PFS_REQUIRED, PFS_OPTIONAL };
static const struct pfs_define_desc {
	const char *name;
	int optional, need;	/* need: the groups that cannot do without it */
	ulong lo, hi;		/* sanity bounds of the value */
} pfs_schema[PFS_NR_DEFINES] = {
#define LAYOUT_ITEM(name, kind, need, lo, hi) { #name, PFS_##kind, need, lo, hi },
#include "../scripts/layout.def"
#undef LAYOUT_ITEM
};

/* The arrays sized by PFD_MAX_* and PFS_MAX_* hold what layout.def's bounds let in. */
enum {
#define LAYOUT_ITEM(name, kind, need, lo, hi) PFS_HI_##name = (hi) < INT_MAX ? (int)(hi) : INT_MAX,
#include "../scripts/layout.def"
#undef LAYOUT_ITEM
};
_Static_assert((1 << PFS_HI_SWP_TYPE_BITS) <= PFD_MAX_SWP_TYPES &&
	       (1 << PFS_HI_MAX_SWAPFILES_SHIFT) <= PFD_MAX_SWP_TYPES,
	       "layout.def lets in more swap types than swap_kind[] holds");
_Static_assert(PFS_HI_MAPLE_HEIGHT_MAX <= PFS_MAX_MAPLE_HEIGHT,
	       "layout.def lets in a deeper maple tree than the walk recurses");

/* Record that the NEED_* groups in group lack what (the first lack is kept). */
static void pfs_lack(int group, const char *what)
{
	int i;

	for (i = 1; i <= NEED_LAST; i <<= 1)
		if ((i & group) && !(L.missing & i))
			snprintf(L.missing_what[i], sizeof(L.missing_what[i]), "%s", what);
	L.missing |= group;
}

/*
 * Record that pfscale-layout does not serve the NEED_* groups in group,
 * and why (printf-style, naming the file; pfs_need adds how to make it).
 */
static void __attribute__((format(printf, 2, 3))) pfs_defs_lack(int group, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 1; i <= NEED_LAST; i <<= 1)
		if ((i & group) && !(L.defs_missing & i)) {
			va_start(ap, fmt);
			vsnprintf(L.defs_what[i], sizeof(L.defs_what[i]), fmt, ap);
			va_end(ap);
		}
	L.defs_missing |= group;
}

/* What gdb prints for "p EXPR" (after "= "), into out; 0 if nothing. */
int pfs_gdb_print(const char *expr, char *out, int len)
{
	char cmd[160];
	int ok = 0;

	snprintf(cmd, sizeof(cmd), "p %s", expr);
	open_tmpfile();
	if (gdb_pass_through(cmd, pc->tmpfile, GNU_RETURN_ON_ERROR)) {
		char line[BUFSIZE];

		rewind(pc->tmpfile);
		while (fgets(line, sizeof(line), pc->tmpfile)) {
			char *eq = line[0] == '$' ? strstr(line, "= ") : NULL;

			if (eq) {
				snprintf(out, len, "%s", eq + 2);
				out[strcspn(out, "\n")] = 0;
				ok = 1;
			}
		}
	}
	close_tmpfile();
	return ok;
}

/*
 * A member's offset and size, also inside an anonymous union or struct
 * (6.1's mm_struct has all its members in one); the size from gdb when
 * crash cannot tell it for an anonymous member.
 */
static void pfs_member(int id)
{
	const struct pfs_member_desc *d = &pfs_members[id];
	long o = MEMBER_OFFSET((char *)d->s, (char *)d->m), size;

	if (o >= 0) {
		size = MEMBER_SIZE((char *)d->s, (char *)d->m);
	} else {
		o = ANON_MEMBER_OFFSET((char *)d->s, (char *)d->m);
		size = o >= 0 ? ANON_MEMBER_SIZE((char *)d->s, (char *)d->m) : -1;
	}
	if (o >= 0 && size <= 0) {
		char expr[160], val[32];

		snprintf(expr, sizeof(expr), "sizeof(((struct %s *)0)->%s)", d->s, d->m);
		if (!pfs_gdb_print(expr, val, sizeof(val)) || sscanf(val, "%ld", &size) != 1)
			size = -1;
	}
	L.off[id] = o;
	L.size[id] = size;
	if (o < 0 && d->need)
		pfs_lack(d->need, d->name);
}

int pfs_read_member(ulong addr, int id, void *buf, long len, ulong flags)
{
	const struct pfs_member_desc *d = &pfs_members[id];

	if (L.off[id] < 0)
		return 0;
	/* as dminfo's GET_VALUE: the kernel's member must be what is read */
	if (L.size[id] != len)
		error(FATAL, "%s is %ld bytes in this kernel, this extension reads %ld\n",
		      d->name, L.size[id], len);
	return readmem(addr + L.off[id], KVADDR, buf, len, (char *)d->name, flags);
}

/*
 * An enumerator's value. crash's enumerator_value() refuses names that are
 * also struct tags (maple_range_64): then ask gdb for it in decimal.
 */
static long pfs_enum(const char *name, int need)
{
	char expr[128], val[64];
	long v;

	if (enumerator_value((char *)name, &v))
		return v;
	snprintf(expr, sizeof(expr), "/d %s", name);
	if (pfs_gdb_print(expr, val, sizeof(val)) && sscanf(val, "%ld", &v) == 1)
		return v;
	pfs_lack(need, name);
	return -1;
}

/* A kernel table of small integers (mt_slots[]) into buf. */
static void pfs_byte_table(const char *sym, unsigned char *buf, int len, int need)
{
	int n;

	memset(buf, 0, len);
	if (!symbol_exists((char *)sym) || (n = get_array_length((char *)sym, NULL, 0)) <= 0 ||
	    n > len || !readmem(symbol_value((char *)sym), KVADDR, buf, n, (char *)sym,
				RETURN_ON_ERROR | QUIET))
		pfs_lack(need, sym);
}

/* The maple tree's node geometry: enum maple_type, mt_slots[], mt_pivots[]. */
static void pfs_maple_geo(void)
{
	struct pfd_maple_geo *g = &L.maple;

	g->node_size = STRUCT_SIZE("maple_node");
	g->dense = pfs_enum("maple_dense", NEED_VMA);
	g->leaf_64 = pfs_enum("maple_leaf_64", NEED_VMA);
	g->range_64 = pfs_enum("maple_range_64", NEED_VMA);
	g->arange_64 = pfs_enum("maple_arange_64", NEED_VMA);
	pfs_byte_table("mt_slots", g->slots, sizeof(g->slots), NEED_VMA);
	pfs_byte_table("mt_pivots", g->pivots, sizeof(g->pivots), NEED_VMA);
	g->r64_pivot = OFF(maple_range_64_pivot);
	g->r64_slot = OFF(maple_range_64_slot);
	g->a64_pivot = OFF(maple_arange_64_pivot);
	g->a64_slot = OFF(maple_arange_64_slot);
	g->dense_slot = OFF(maple_node_slot);
}

/*
 * The MM counters, from their enum (enum { MM_FILEPAGES, ...,
 * NR_MM_COUNTERS }): its enumerators as gdb's ptype lists them.
 */
static void pfs_mm_counters(void)
{
	char cmd[] = "ptype NR_MM_COUNTERS", list[BUFSIZE] = "", *tok, *save;

	L.nr_mm = 0;
	L.nr_mm_counters = pfs_enum("NR_MM_COUNTERS", NEED_RSS);
	open_tmpfile();
	if (gdb_pass_through(cmd, pc->tmpfile, GNU_RETURN_ON_ERROR)) {
		char line[BUFSIZE];
		int in = 0;

		/* "type = enum {MM_FILEPAGES, ...}", on one line or more */
		rewind(pc->tmpfile);
		while (fgets(line, sizeof(line), pc->tmpfile)) {
			char *p = in ? line : strstr(line, "enum {");

			if (!p)
				continue;
			if (!in) {
				p += strlen("enum {");
				in = 1;
			}
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s", p);
			if (strchr(p, '}'))
				break;
		}
	}
	close_tmpfile();
	for (tok = strtok_r(list, ",}\n", &save); tok; tok = strtok_r(NULL, ",}\n", &save)) {
		char name[64], shortname[32];
		long v;

		/* "MM_FILEPAGES" or "MM_FILEPAGES = 0" */
		if (sscanf(tok, " %63[A-Za-z0-9_]", name) != 1 ||
		    (v = pfs_enum(name, NEED_RSS)) < 0 ||
		    !pfd_mm_counter(name, v, L.nr_mm_counters, shortname, sizeof(shortname)))
			continue;
		if (L.nr_mm == PFS_MAX_MM) {
			L.nr_mm++;	/* more than the readers hold */
			break;
		}
		strcpy(L.mm_names[L.nr_mm], shortname);
		L.mm_index[L.nr_mm++] = v;
	}
	if (!L.nr_mm || L.nr_mm > PFS_MAX_MM || L.nr_mm_counters > PFD_MAX_MM_COUNTERS)
		pfs_lack(NEED_RSS, "the MM counter enumerators");
}

/*
 * The VMA flag values, by their names in the kernel's vmaflag_names[]
 * (mm/debug.c, CONFIG_DEBUG_VM); without it include/linux/mm.h's values.
 */
static void pfs_vm_flags(void)
{
	long size = STRUCT_SIZE("trace_print_flags");
	ulong base, v, p;
	char buf[32];
	int i;

	pfd_vm_flags_default(&L.vm);
	if (!symbol_exists("vmaflag_names"))
		return;
	base = symbol_value("vmaflag_names");
	for (i = 0; size > 0 && i < 64; i++) {
		if (!PFS_READ(base + i * size, trace_print_flags_name, p, RETURN_ON_ERROR | QUIET) ||
		    !p || !PFS_READ(base + i * size, trace_print_flags_mask, v,
				    RETURN_ON_ERROR | QUIET) ||
		    !read_string(p, buf, sizeof(buf) - 1))
			break;
		pfd_vm_flag_name(&L.vm, buf, v);
	}
	if (!pfd_vm_flags_complete(&L.vm))
		pfs_lack(NEED_VMA, "vmaflag_names[] read, write, exec, mayshare");
}

/* Where pfscale-layout is: $PFSCALE_LAYOUT, else next to crash's vmlinux. */
static void pfs_layout_path(void)
{
	const char *env = getenv("PFSCALE_LAYOUT"), *nl, *slash;
	char dir[PATH_MAX], abs[PATH_MAX];

	if (env && *env) {
		snprintf(L.layout_file, sizeof(L.layout_file), "%s", env);
		return;
	}
	/* namelist_orig: the file named, if crash decompressed it elsewhere */
	nl = pc->namelist_orig ? pc->namelist_orig : pc->namelist;
	slash = nl ? strrchr(nl, '/') : NULL;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == nl ? 1 : (int)(slash - nl), nl);
	else
		snprintf(dir, sizeof(dir), ".");
	/* absolute, for the messages */
	if (realpath(dir, abs))
		snprintf(dir, sizeof(dir), "%s", abs);
	snprintf(L.layout_file, sizeof(L.layout_file), "%s%spfscale-layout", dir,
		 strcmp(dir, "/") ? "/" : "");
}

/*
 * The kernel's GNU build-id, in hex: the NT_GNU_BUILD_ID note among its
 * ELF notes (__start_notes..__stop_notes, read from memory). 0 if none.
 */
static int pfs_build_id(char *hex, int len)
{
	unsigned char notes[1024];
	ulong start, size, at, i;
	uint32_t nh[3];	/* Elf64_Nhdr: namesz, descsz, type */

	if (!symbol_exists("__start_notes") || !symbol_exists("__stop_notes"))
		return 0;
	start = symbol_value("__start_notes");
	size = symbol_value("__stop_notes") - start;
	if (size > sizeof(notes) ||
	    !readmem(start, KVADDR, notes, size, "notes", RETURN_ON_ERROR | QUIET))
		return 0;
	for (at = 0; at + sizeof(nh) <= size; ) {
		ulong name, desc;

		memcpy(nh, notes + at, sizeof(nh));
		name = at + sizeof(nh);
		desc = name + ((nh[0] + 3) & ~3UL);
		at = desc + ((nh[1] + 3) & ~3UL);
		if (at > size)
			break;
		if (nh[2] == 3 && nh[0] == 4 && !memcmp(notes + name, "GNU", 4) &&
		    nh[1] > 0 && (int)nh[1] * 2 < len) {
			for (i = 0; i < nh[1]; i++)
				sprintf(hex + 2 * i, "%02x", notes[desc + i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Read pfscale-layout: "NAME VALUE" lines, VALUE decimal, negative for a
 * value with bit 63 set; '#' lines are comments ("# build-id HEX": the
 * vmlinux it was written for, into want), names not in layout.def are
 * skipped. found[i]: L.def[i] was set. 0 if the file cannot be read.
 */
static int pfs_read_defines(int *found, char *want)
{
	char line[BUFSIZE], name[128], value[64], *end;
	int i, lineno = 0;
	FILE *f;

	if (!(f = fopen(L.layout_file, "r"))) {
		pfs_defs_lack(NEED_PTE | NEED_VMA, "cannot read %s (%s)", L.layout_file,
			      strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		ulong v = 0;
		char extra;
		int ok;

		lineno++;
		if (sscanf(line, "# build-id %129[0-9a-f]", want) == 1 ||
		    line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
			continue;
		ok = sscanf(line, "%127s %63s %c", name, value, &extra) == 2;
		if (ok) {
			/* decimal; negative: bit 63 set (as unsigned 64-bit) */
			errno = 0;
			v = value[0] == '-' ? (ulong)strtoll(value, &end, 10) :
					      strtoul(value, &end, 10);
			ok = end != value && !*end && !errno;
		}
		if (!ok) {
			pfs_defs_lack(NEED_PTE | NEED_VMA, "%s line %d is not \"NAME VALUE\"",
				      L.layout_file, lineno);
			break;
		}
		for (i = 0; i < PFS_NR_DEFINES; i++)
			if (!strcmp(pfs_schema[i].name, name))
				L.def[i] = v, found[i] = 1;
	}
	fclose(f);
	return 1;
}

/*
 * A file of another kernel: written for another build-id; in a file
 * without one, swap_info[] does not have MAX_SWAPFILES entries.
 */
static void pfs_check_build(const char *want)
{
	char have[130];

	if (want[0] && pfs_build_id(have, sizeof(have))) {
		if (strcmp(want, have))
			pfs_defs_lack(NEED_PTE | NEED_VMA, "%s is not this vmlinux's: build-id %s, "
				      "vmlinux has %s", L.layout_file, want, have);
	} else if (!(L.defs_missing & NEED_PTE) && symbol_exists("swap_info") &&
		   get_array_length("swap_info", NULL, 0) != (int)PFS_DEF(MAX_SWAPFILES)) {
		pfs_defs_lack(NEED_PTE | NEED_VMA, "%s is not this vmlinux's: MAX_SWAPFILES %lu, "
			      "swap_info[] has %d", L.layout_file, PFS_DEF(MAX_SWAPFILES),
			      get_array_length("swap_info", NULL, 0));
	}
}

/* What follows from the #defines: the PTE bits, the swap kinds, the rwsem bits. */
static void pfs_derive(void)
{
	struct pfd_swap_nums n = {
		PFS_DEF(MAX_SWAPFILES), PFS_DEF(MAX_SWAPFILES_SHIFT), PFS_DEF(SWP_TYPE_BITS),
		PFS_DEF(SWP_HWPOISON_NUM), PFS_DEF(SWP_MIGRATION_NUM), PFS_DEF(SWP_DEVICE_NUM),
		PFS_DEF(SWP_PTE_MARKER_NUM), PFS_DEF(SWP_SWAPIN_ERROR_NUM),
	};
	struct pfd_rwsem b = {
		PFS_DEF(RWSEM_WRITER_LOCKED), PFS_DEF(RWSEM_FLAG_WAITERS),
		PFS_DEF(RWSEM_FLAG_HANDOFF), PFS_DEF(RWSEM_READER_SHIFT),
		PFS_DEF(RWSEM_READER_OWNED), PFS_DEF(RWSEM_OWNER_FLAGS_MASK),
	};

	L.rwsem = b;
	if (L.defs_missing & NEED_PTE)
		return;
	if (!pfd_swap_kinds(&n, L.swap_kind)) {
		pfs_defs_lack(NEED_PTE, "%s: MAX_SWAPFILES %lu and the SWP_*_NUM do not add up "
			      "to 2^MAX_SWAPFILES_SHIFT %lu as swap.h has them (within "
			      "SWP_TYPE_BITS %lu)", L.layout_file, PFS_DEF(MAX_SWAPFILES),
			      PFS_DEF(MAX_SWAPFILES_SHIFT), PFS_DEF(SWP_TYPE_BITS));
		return;
	}
	pfd_pte_init(&L.pte, PFS_DEF(PAGE_SHIFT), PFS_DEF(PTRS_PER_PTE),
		     PFS_DEF(__PHYSICAL_MASK_SHIFT), PFS_DEF(_PAGE_BIT_PRESENT),
		     PFS_DEF(_PAGE_BIT_PSE), PFS_DEF(_PAGE_BIT_PROTNONE),
		     PFS_DEF(_PAGE_BIT_SPECIAL), PFS_DEF(SWP_TYPE_BITS));
}

/*
 * Fill the #define part of the table from pfscale-layout. Each name
 * serves the groups that cannot do without it and has sanity bounds
 * [lo, hi], both from layout.def.
 */
static void pfs_defines(void)
{
	int found[PFS_NR_DEFINES] = { 0 }, i;
	char want[130] = "";

	L.defs_missing = 0;
	pfs_layout_path();
	if (!pfs_read_defines(found, want))
		return;
	for (i = 0; i < PFS_NR_DEFINES; i++) {
		if (!found[i] && !pfs_schema[i].optional)
			pfs_defs_lack(pfs_schema[i].need, "%s has no %s", L.layout_file,
				      pfs_schema[i].name);
		else if (found[i] && (L.def[i] < pfs_schema[i].lo || L.def[i] > pfs_schema[i].hi))
			pfs_defs_lack(pfs_schema[i].need, "%s: %s %ld is out of bounds",
				      L.layout_file, pfs_schema[i].name, (long)L.def[i]);
	}
	if (PFS_DEF(PAGE_SHIFT) <= 30)
		L.page_size = 1UL << PFS_DEF(PAGE_SHIFT);
	if (!(L.defs_missing & NEED_PTE) &&
	    (PFS_DEF(__PHYSICAL_MASK_SHIFT) <= PFS_DEF(PAGE_SHIFT) ||
	     PFS_DEF(PTRS_PER_PTE) & (PFS_DEF(PTRS_PER_PTE) - 1)))
		pfs_defs_lack(NEED_PTE, "%s: __PHYSICAL_MASK_SHIFT %lu or PTRS_PER_PTE %lu is off",
			      L.layout_file, PFS_DEF(__PHYSICAL_MASK_SHIFT), PFS_DEF(PTRS_PER_PTE));
	pfs_check_build(want);
	pfs_derive();
}

/* A kernel variable's value (vsyscall_mode, __pgtable_l5_enabled), 0 if none. */
static ulong pfs_symbol_addr(const char *sym)
{
	return symbol_exists((char *)sym) ? symbol_value((char *)sym) : 0;
}

/* The symbols the commands compare with or count by. */
static void pfs_symbols(void)
{
	char mode[32] = "";
	uint l5 = 0, nr = 0;

	L.special_ops = pfs_symbol_addr("special_mapping_vmops");
	L.legacy_special_ops = pfs_symbol_addr("legacy_special_mapping_vmops");
	/* x86's [vsyscall]: not in the tree, but /proc/PID/maps lists it last */
	L.gate_vma = pfs_symbol_addr("gate_vma");
	L.gate_ops = pfs_symbol_addr("gate_vma_ops");
	/* get_gate_vma() returns NULL with vsyscall=none: gdb names the value */
	L.gate_listed = L.gate_vma && symbol_exists("vsyscall_mode") &&
		pfs_gdb_print("vsyscall_mode", mode, sizeof(mode)) && strcmp(mode, "NONE");
	if (symbol_exists("__pgtable_l5_enabled"))
		readmem(symbol_value("__pgtable_l5_enabled"), KVADDR, &l5, sizeof(l5),
			"__pgtable_l5_enabled", RETURN_ON_ERROR);
	L.levels = l5 ? 5 : 4;
	if (!symbol_exists("pfscale_counter_desc") || !symbol_exists("pfscale_counters"))
		pfs_lack(NEED_COUNTERS, "pfscale_counter_desc");
	L.desc_size = STRUCT_SIZE("pfscale_counter_desc");
	if (symbol_exists("pfscale_nr_counters"))
		readmem(symbol_value("pfscale_nr_counters"), KVADDR, &nr, sizeof(nr),
			"pfscale_nr_counters", RETURN_ON_ERROR);
	L.nr_counters = nr;
	if (L.nr_counters <= 0 || L.nr_counters > PFS_MAX_COUNTERS || L.desc_size <= 0)
		pfs_lack(NEED_COUNTERS, "pfscale_nr_counters");
}

/* Fill the layout table once (per session: the vmlinux does not change). */
static void pfs_layout_init(void)
{
	int i;

	memset(&L, 0, sizeof(L));
	for (i = 0; i < PFS_NR_MEMBERS; i++)
		pfs_member(i);
	pfs_maple_geo();
	pfs_mm_counters();
	pfs_vm_flags();
	pfs_symbols();
	pfs_defines();
	L.init = 1;
}

/* The layout, with what cmd needs, or one error line (crash's FATAL). */
void pfs_need(int need)
{
	int i, first = !L.init;

	if (first)
		pfs_layout_init();
	for (i = 1; i <= NEED_LAST; i <<= 1) {
		if (!(need & i & L.missing))
			continue;
		if (i == NEED_COUNTERS)
			error(FATAL, "this kernel has no pfscale patches (no %s)\n",
			      L.missing_what[i]);
		error(FATAL, "this kernel lacks %s\n", L.missing_what[i]);
	}
	/* pfscale-layout may have been made since the last command: look again */
	if (!first && (need & L.defs_missing))
		pfs_defines();
	for (i = 1; i <= NEED_LAST; i <<= 1)
		if (need & i & L.defs_missing)
			error(FATAL, "%s: make it with scripts/layout.sh KERNEL_BUILD_DIR > %s%s\n",
			      L.defs_what[i], L.layout_file,
			      getenv("PFSCALE_LAYOUT") && *getenv("PFSCALE_LAYOUT") ?
			      " (PFSCALE_LAYOUT)" : " (or set PFSCALE_LAYOUT)");
}

/*
 * -j (or gdb's --json): the commands' one option; the rest are positional
 * arguments. Returns the index of the first of them.
 */
int pfs_options(int *json)
{
	int c, i;

	*json = 0;
	for (i = 1; i < argcnt; i++)
		if (!strcmp(args[i], "--json"))
			args[i] = "-j";
	while ((c = getopt(argcnt, args, "j")) != EOF) {
		if (c == 'j')
			*json = 1;
		else
			argerrs++;
	}
	if (argerrs)
		cmd_usage(pc->curcmd, SYNOPSIS);
	return optind;
}
