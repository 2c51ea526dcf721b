/* SPDX-License-Identifier: GPL-2.0 */
/*
 * build/decode-vectors: the crash extension's decode core (crash/decode.c)
 * as a host program, for tests/host/vectors.py. It reads one vector a line
 * on stdin, in the plain words vectors.py writes ("KIND ARG..."; numbers
 * in C syntax), and prints one result a line in the canonical form that
 * vectors.py compares with decode.py's and with the expected value of
 * tests/vectors/decode.json. "def NAME VALUE" lines set the #defines.
 * The JSON writer of the extension's -j (crash/json.c) is tested too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../crash/decode.h"
#include "json_writer.h"

#define MAX_WORDS 4096

static const char *def_names[] = {
	"PAGE_SHIFT", "PTRS_PER_PTE", "__PHYSICAL_MASK_SHIFT", "_PAGE_BIT_PRESENT",
	"_PAGE_BIT_PSE", "_PAGE_BIT_PROTNONE", "_PAGE_BIT_SPECIAL", "SWP_TYPE_BITS",
	"MAX_SWAPFILES", "MAX_SWAPFILES_SHIFT", "SWP_HWPOISON_NUM", "SWP_MIGRATION_NUM",
	"SWP_DEVICE_NUM", "SWP_PTE_MARKER_NUM", "SWP_SWAPIN_ERROR_NUM",
	"RWSEM_WRITER_LOCKED", "RWSEM_FLAG_WAITERS", "RWSEM_FLAG_HANDOFF",
	"RWSEM_READER_SHIFT", "RWSEM_READER_OWNED", "RWSEM_OWNER_FLAGS_MASK",
	"MAPLE_NODE_TYPE_SHIFT", "MAPLE_NODE_TYPE_MASK", "MAPLE_NODE_MASK", "MAPLE_ROOT_NODE",
	"MAPLE_RESERVED_RANGE", "MAPLE_HEIGHT_MAX",
};
enum { PAGE_SHIFT, PTRS, PHYS_SHIFT, B_PRESENT, B_PSE, B_PROTNONE, B_SPECIAL, SWP_TYPE_BITS,
       MAXSWAP, MAXSWAP_SHIFT, N_HWPOISON, N_MIGRATION, N_DEVICE, N_MARKER, N_SWAPIN_ERROR,
       W_LOCKED, W_WAITERS, W_HANDOFF, R_SHIFT, R_OWNED, O_MASK, MT_SHIFT, MT_MASK,
       MT_NODE_MASK, MT_ROOT, MT_RESERVED, MT_HEIGHT, NDEFS };
static u64 defs[NDEFS];

/* The words of a line after its kind. */
static char *words[MAX_WORDS];
static int nwords;

static u64 num(int i)
{
	return i < nwords ? strtoull(words[i], NULL, 0) : 0;
}

static struct pfd_pte pte(void)
{
	struct pfd_pte p;

	pfd_pte_init(&p, defs[PAGE_SHIFT], defs[PTRS], defs[PHYS_SHIFT], defs[B_PRESENT],
		     defs[B_PSE], defs[B_PROTNONE], defs[B_SPECIAL], defs[SWP_TYPE_BITS]);
	return p;
}

static struct pfd_swap_nums swap_nums(int at)
{
	struct pfd_swap_nums n = {
		num(at), num(at + 1), num(at + 2), num(at + 3), num(at + 4), num(at + 5),
		num(at + 6), num(at + 7),
	};
	return n;
}

static int swap_kinds(const char *kind[PFD_MAX_SWP_TYPES])
{
	struct pfd_swap_nums n = {
		defs[MAXSWAP], defs[MAXSWAP_SHIFT], defs[SWP_TYPE_BITS], defs[N_HWPOISON],
		defs[N_MIGRATION], defs[N_DEVICE], defs[N_MARKER], defs[N_SWAPIN_ERROR],
	};
	return pfd_swap_kinds(&n, kind);
}

/* pte ENTRY SHIFT -> "PRESENT LEAF PHYS" (PHYS: of the page, or of the table) */
static void v_pte(void)
{
	struct pfd_pte p = pte();
	int leaf = pfd_is_leaf(&p, num(0), (int)num(1));

	printf("%d %d 0x%llx\n", pfd_is_present(&p, num(0)), leaf,
	       (unsigned long long)pfd_entry_phys(&p, num(0), leaf ? (int)num(1) : p.page_shift));
}

/* swap_kinds MAX SHIFT BITS HW MIG DEV MARKER ERR -> "T:KIND ..." or "refused" */
static void v_swap_kinds(void)
{
	struct pfd_swap_nums n = swap_nums(0);
	const char *kind[PFD_MAX_SWP_TYPES];
	int t, first = 1;

	if (!pfd_swap_kinds(&n, kind)) {
		printf("refused\n");
		return;
	}
	for (t = 0; t < PFD_MAX_SWP_TYPES; t++)
		if (kind[t]) {
			printf("%s%d:%s", first ? "" : " ", t, kind[t]);
			first = 0;
		}
	printf("\n");
}

/* swap_kind ENTRY -> KIND */
static void v_swap_kind(void)
{
	struct pfd_pte p = pte();
	const char *kind[PFD_MAX_SWP_TYPES];

	if (!swap_kinds(kind)) {
		printf("refused\n");
		return;
	}
	printf("%s\n", pfd_swap_kind(&p, kind, num(0)));
}

/* A synthetic page table: "TABLE IDX ENTRY" triples. */
struct tables {
	int n;
	u64 *t;
};

static int read_entry(void *ctx, u64 table, int idx, u64 *e)
{
	struct tables *tb = ctx;
	int i;

	*e = 0;
	for (i = 0; i + 2 < tb->n; i += 3)
		if (tb->t[i] == table && tb->t[i + 1] == (u64)idx)
			*e = tb->t[i + 2];
	return 1;
}

static void print_run(const struct pfd_run *r, void *ctx)
{
	static const char *const sz[] = { "4K", "2M", "1G" };
	int i, n = 0;

	(void)ctx;
	printf("run 0x%llx-0x%llx pfn 0x%llx leaves ", (unsigned long long)r->start,
	       (unsigned long long)r->end, (unsigned long long)r->pfn);
	for (i = 0; i < 3; i++)
		if (r->leaves[i])
			printf("%s%s:%ld", n++ ? "," : "", sz[i], r->leaves[i]);
	printf(" special %ld; ", r->special);
}

/* The not-present counts by kind, " KIND:N" in the order of the names. */
static void print_kinds(const long not_present[PFD_MAX_SWP_TYPES], const char **kind)
{
	const char *last = "";
	int i;

	for (;;) {
		const char *next = NULL;
		long n = 0;

		for (i = 0; i < PFD_MAX_SWP_TYPES; i++) {
			const char *k = kind && kind[i] ? kind[i] : "swap";

			if (!not_present[i] || strcmp(k, last) <= 0)
				continue;
			if (!next || strcmp(k, next) < 0)
				next = k, n = 0;
			if (!strcmp(k, next))
				n += not_present[i];
		}
		if (!next)
			return;
		printf(" %s:%ld", next, n);
		last = next;
	}
}

/* walk LEVELS PGD START END (TABLE IDX ENTRY)... -> "run ...; ... total N KIND:N ..." */
static void v_walk(void)
{
	struct pfd_pte p = pte();
	const char *kind[PFD_MAX_SWP_TYPES];
	long not_present[PFD_MAX_SWP_TYPES] = { 0 };
	u64 t[MAX_WORDS];
	struct tables tb = { 0, t };
	struct pfd_runs runs = { .emit = print_run };
	int i;

	for (i = 4; i < nwords; i++)
		t[tb.n++] = num(i);
	pfd_walk_range(&p, (int)num(0), num(1), num(2), num(3), read_entry, &tb, &runs,
		       not_present);
	printf("total %llu", (unsigned long long)runs.total);
	print_kinds(not_present, swap_kinds(kind) ? kind : NULL);
	printf("\n");
}

/*
 * maple TYPE MIN MAX (INDEX WORD)... with the 6.1 geometry given by
 * "maple_geo DENSE LEAF RANGE ARANGE SLOTS0..3 PIVOTS0..3 R64P R64S A64P A64S DS SIZE"
 * -> "ok|type|pivot@I leaf=L FIRST-LAST:ENTRY ..."
 */
static struct pfd_maple_geo geo;

static void v_maple_geo(void)
{
	int i;

	geo.dense = (long)num(0), geo.leaf_64 = (long)num(1), geo.range_64 = (long)num(2);
	geo.arange_64 = (long)num(3);
	for (i = 0; i < 4; i++) {
		geo.slots[i] = (unsigned char)num(4 + i);
		geo.pivots[i] = (unsigned char)num(8 + i);
	}
	geo.r64_pivot = (long)num(12), geo.r64_slot = (long)num(13);
	geo.a64_pivot = (long)num(14), geo.a64_slot = (long)num(15);
	geo.dense_slot = (long)num(16), geo.node_size = (long)num(17);
}

static void v_maple(void)
{
	u64 node[512] = { 0 };
	struct pfd_maple_slot out[32];
	int i, n, leaf, bad, err;

	for (i = 3; i + 1 < nwords; i += 2)
		if (num(i) < 512)
			node[num(i)] = num(i + 1);
	err = pfd_maple_node(&geo, node, (long)num(0), num(1), num(2), out, &n, &leaf, &bad);
	if (err == PFD_MAPLE_BAD_PIVOT)
		printf("pivot@%d", bad);
	else
		printf("%s", err == PFD_MAPLE_BAD_TYPE ? "type" : "ok");
	printf(" leaf=%d", leaf);
	for (i = 0; i < n; i++)
		printf(" 0x%llx-0x%llx:0x%llx", (unsigned long long)out[i].first,
		       (unsigned long long)out[i].last, (unsigned long long)out[i].entry);
	printf("\n");
}

/* A synthetic tree: "NODE INDEX WORD" triples, all in words[] after the root. */
struct tree {
	int from;	/* the first triple's word */
};

static int tree_read(void *ctx, u64 node, u64 *out)
{
	struct tree *t = ctx;
	int i, found = 0;

	for (i = t->from; i + 2 < nwords; i += 3)
		if (num(i) == node && num(i + 1) < 128) {
			out[num(i + 1)] = num(i + 2);
			found = 1;
		}
	return found;
}

static void tree_visit(void *ctx, u64 entry, u64 first, u64 last)
{
	(void)ctx;
	printf(" 0x%llx-0x%llx:0x%llx", (unsigned long long)first, (unsigned long long)last,
	       (unsigned long long)entry);
}

/* what is wrong, printed after the entries */
static char tree_errors[1024];

static void tree_bad(void *ctx, const char *what, u64 node, u64 min, u64 max)
{
	size_t n = strlen(tree_errors);

	(void)ctx, (void)min, (void)max;
	snprintf(tree_errors + n, sizeof(tree_errors) - n, " !%s@0x%llx", what,
		 (unsigned long long)node);
}

/* maple_walk ROOT (NODE INDEX WORD)... -> "nodes=N ENTRIES... !WHAT@NODE..." in walk order */
static void v_maple_walk(void)
{
	struct tree t = { 1 };
	struct pfd_maple_walk w = {
		&geo, defs[MT_NODE_MASK], defs[MT_SHIFT], defs[MT_MASK], defs[MT_ROOT],
		defs[MT_RESERVED], defs[MT_HEIGHT], tree_read, tree_visit, tree_bad, &t, 0, 0,
	};

	tree_errors[0] = 0;
	printf("walk");
	pfd_maple_walk(&w, num(0));
	printf("%s nodes=%ld\n", tree_errors, w.nodes);
}

/* rwsem COUNT -> "STATE;FLAG,FLAG" */
static void v_rwsem(void)
{
	struct pfd_rwsem b = { defs[W_LOCKED], defs[W_WAITERS], defs[W_HANDOFF],
			       defs[R_SHIFT], defs[R_OWNED], defs[O_MASK] };
	const char *flags[2];
	char state[64];
	int i, n;

	pfd_rwsem_state(&b, num(0), state, sizeof(state));
	n = pfd_rwsem_flags(&b, num(0), flags);
	printf("%s;", state);
	for (i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", flags[i]);
	printf("\n");
}

/* rss NAME VALUE ... -> the RSS sum */
static void v_rss(void)
{
	long sum = 0;
	int i;

	for (i = 0; i + 1 < nwords; i += 2)
		if (pfd_mm_in_rss(words[i]))
			sum += (long)num(i + 1);
	printf("%ld\n", sum);
}

/* mm_counters NR ENUMERATOR VALUE ... -> "INDEX:NAME ..." */
static void v_mm_counters(void)
{
	char name[64];
	int i, n = 0;

	for (i = 1; i + 1 < nwords; i += 2)
		if (pfd_mm_counter(words[i], (long)num(i + 1), (long)num(0), name, sizeof(name)))
			printf("%s%ld:%s", n++ ? " " : "", (long)num(i + 1), name);
	printf("\n");
}

/* vm_flags FLAGS [NAME MASK]... ("-": no table) -> "PERMS SOURCE" or "refused" */
static void v_vm_flags(void)
{
	struct pfd_vm_flags v;
	char perms[5];
	int i;

	pfd_vm_flags_default(&v);
	for (i = 1; i + 1 < nwords; i += 2)
		pfd_vm_flag_name(&v, words[i], num(i + 1));
	if (nwords > 1 && !pfd_vm_flags_complete(&v)) {
		printf("refused\n");
		return;
	}
	pfd_perms(&v, num(0), perms);
	printf("%s %s\n", perms, v.source);
}

/* dentry ROOT NAME... (leaf first) -> PATH */
static void v_dentry(void)
{
	char path[8192];

	pfd_dentry_path((const char *const *)words + 1, nwords - 1, (int)num(0), path,
			sizeof(path));
	printf("%s\n", path);
}

static void v_def(void)
{
	int i;

	for (i = 0; i < NDEFS; i++)
		if (nwords == 2 && !strcmp(words[0], def_names[i]))
			defs[i] = num(1);
}

/* %XX escapes of a word (vectors.py quotes strings so that they are one word). */
static const char *unquote(const char *s, char *out, size_t len)
{
	size_t n = 0;
	unsigned int c;

	for (; *s && n + 1 < len; s++)
		if (*s == '%' && sscanf(s + 1, "%2x", &c) == 1)
			out[n++] = (char)c, s += 2;
		else
			out[n++] = *s;
	out[n] = 0;
	return out;
}

/*
 * json STYLE TOKEN... -> what lib/json_writer.h writes in STYLE (spaced,
 * compact, members: compact members of a list not the writer's own):
 * { } [ ] open and close, n:NAME a name, s:STR i:INT u:UINT h:HEX b:0|1
 * z (null) the values.
 */
static void v_json(void)
{
	struct jw w;
	char buf[4096];
	int i;

	jw_init(&w, stdout, !nwords || !strcmp(words[0], "spaced") ? JW_SPACED :
			    !strcmp(words[0], "compact") ? JW_COMPACT : JW_COMPACT | JW_MEMBERS);
	for (i = 1; i < nwords; i++) {
		const char *t = words[i], *arg = t[0] && t[1] == ':' ? t + 2 : "";

		switch (t[0]) {
		case '{': jw_start_object(&w); break;
		case '}': jw_end_object(&w); break;
		case '[': jw_start_array(&w); break;
		case ']': jw_end_array(&w); break;
		case 'n': jw_name(&w, unquote(arg, buf, sizeof(buf))); break;
		case 's': jw_string(&w, unquote(arg, buf, sizeof(buf))); break;
		case 'i': jw_int(&w, strtol(arg, NULL, 0)); break;
		case 'u': jw_uint(&w, strtoul(arg, NULL, 0)); break;
		case 'h': jw_hex(&w, strtoul(arg, NULL, 0)); break;
		case 'b': jw_bool(&w, atoi(arg)); break;
		case 'z': jw_null(&w); break;
		}
	}
	if (nwords && !strcmp(words[0], "members"))
		putchar('\n');		/* members end no line: the test's line ends here */
}

static const struct {
	const char *kind;
	void (*fn)(void);
} kinds[] = {
	{ "def", v_def }, { "maple_geo", v_maple_geo }, { "pte", v_pte },
	{ "swap_kinds", v_swap_kinds }, { "swap_kind", v_swap_kind },
	{ "walk", v_walk }, { "maple", v_maple }, { "rwsem", v_rwsem },
	{ "qspinlock", NULL }, { "rss", v_rss }, { "mm_counters", v_mm_counters },
	{ "vm_flags", v_vm_flags }, { "dentry", v_dentry }, { "json", v_json },
	{ "maple_walk", v_maple_walk },
};

int main(void)
{
	static char line[1 << 16];
	size_t k;

	while (fgets(line, sizeof(line), stdin)) {
		char *kind = strtok(line, " \n");

		nwords = 0;
		while (nwords < MAX_WORDS && (words[nwords] = strtok(NULL, " \n")))
			nwords++;
		for (k = 0; kind && k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strcmp(kind, kinds[k].kind))
				break;
		if (!kind || k == sizeof(kinds) / sizeof(kinds[0]))
			printf("unknown vector kind %s\n", kind ? kind : "(none)");
		else if (!kinds[k].fn)	/* qspinlock VAL -> STATE */
			printf("%s\n", pfd_qspin_state((uint32_t)num(0)));
		else
			kinds[k].fn();
		fflush(stdout);
	}
	return 0;
}
