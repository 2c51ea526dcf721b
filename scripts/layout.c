// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel layout facts that pfscale's debugger readers need and that are
 * #defines, so absent from the debug info: page-table and swap-entry bits,
 * the swap types, the maple tree's node-pointer encoding, the rwsem count
 * and owner bits. scripts/layout.sh compiles this file to assembly with the
 * flags kbuild used for kernel/locking/rwsem.o of the same build, so the
 * compiler evaluates each name with this kernel's headers and config (the
 * way kbuild's asm-offsets.c does), and writes the values next to vmlinux
 * as pfscale-layout: "NAME VALUE" lines that gdb-scripts and
 * crash/pfscale.c read instead of keeping copies.
 */

/*
 * Two of them are private to a .c file: include it, for this compilation
 * only (the assembly is thrown away).
 */
#include <kernel/locking/rwsem.c>
#include <lib/maple_tree.c>

#include <linux/swap.h>
#include <linux/swapops.h>
#include <asm/pgtable.h>

/* "->NAME VALUE" in the assembly; %c0: the constant without punctuation */
#define LAYOUT(name) \
	asm volatile("\n.ascii \"->" #name " %c0\"" : : "i" ((long)(name)))

void pfscale_layout(void);
void pfscale_layout(void)
{
	LAYOUT(PAGE_SHIFT);
	LAYOUT(PTRS_PER_PTE);
	LAYOUT(__PHYSICAL_MASK_SHIFT);

	/* PTE bits (arch/x86/include/asm/pgtable_types.h) */
	LAYOUT(_PAGE_BIT_PRESENT);
	LAYOUT(_PAGE_BIT_RW);
	LAYOUT(_PAGE_BIT_USER);
	LAYOUT(_PAGE_BIT_PWT);
	LAYOUT(_PAGE_BIT_PCD);
	LAYOUT(_PAGE_BIT_ACCESSED);
	LAYOUT(_PAGE_BIT_DIRTY);
	LAYOUT(_PAGE_BIT_PSE);
	LAYOUT(_PAGE_BIT_GLOBAL);
	LAYOUT(_PAGE_BIT_PROTNONE);
	LAYOUT(_PAGE_BIT_SPECIAL);
	LAYOUT(_PAGE_BIT_UFFD_WP);
	LAYOUT(_PAGE_BIT_SOFT_DIRTY);
	LAYOUT(_PAGE_BIT_DEVMAP);
	LAYOUT(_PAGE_BIT_NX);

	/* swap-format PTEs (arch/x86/include/asm/pgtable_64.h); masks, 0 if unconfigured */
	LAYOUT(SWP_TYPE_BITS);
	LAYOUT(SWP_OFFSET_FIRST_BIT);
	LAYOUT(_PAGE_SWP_SOFT_DIRTY);
	LAYOUT(_PAGE_SWP_UFFD_WP);
#ifdef _PAGE_SWP_EXCLUSIVE
	LAYOUT(_PAGE_SWP_EXCLUSIVE);
#endif

	/* the swap types above the swap files (include/linux/swap.h) */
	LAYOUT(MAX_SWAPFILES_SHIFT);
	LAYOUT(MAX_SWAPFILES);
	LAYOUT(SWP_HWPOISON_NUM);
	LAYOUT(SWP_MIGRATION_NUM);
	LAYOUT(SWP_DEVICE_NUM);
	LAYOUT(SWP_PTE_MARKER_NUM);
	LAYOUT(SWP_SWAPIN_ERROR_NUM);
	LAYOUT(PTE_MARKER_UFFD_WP);
#ifdef PTE_MARKER_PFSCALE_BUSY
	LAYOUT(PTE_MARKER_PFSCALE_BUSY);
#endif

	/* maple node pointers (include/linux/maple_tree.h, lib/maple_tree.c) */
	LAYOUT(MAPLE_NODE_MASK);
	LAYOUT(MAPLE_NODE_TYPE_SHIFT);
	LAYOUT(MAPLE_NODE_TYPE_MASK);
	LAYOUT(MAPLE_ROOT_NODE);
	LAYOUT(MAPLE_RESERVED_RANGE);
	LAYOUT(MAPLE_HEIGHT_MAX);
	LAYOUT(MT_FLAGS_HEIGHT_OFFSET);
	LAYOUT(MT_FLAGS_HEIGHT_MASK);

	/* rw_semaphore count and owner (kernel/locking/rwsem.c) */
	LAYOUT(RWSEM_WRITER_LOCKED);
	LAYOUT(RWSEM_FLAG_WAITERS);
	LAYOUT(RWSEM_FLAG_HANDOFF);
	LAYOUT(RWSEM_READER_SHIFT);
	LAYOUT(RWSEM_READER_OWNED);
	LAYOUT(RWSEM_NONSPINNABLE);
	LAYOUT(RWSEM_OWNER_FLAGS_MASK);
}
