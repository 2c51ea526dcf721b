// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel layout facts that pfscale's debugger readers need and that are
 * #defines, so absent from the debug info: page-table and swap-entry bits,
 * the swap types, the maple tree's node-pointer encoding, the rwsem count
 * and owner bits, as scripts/layout.def lists them. scripts/layout.sh compiles this file to assembly with the
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
	/*
	 * LAYOUT(NAME); for each entry of scripts/layout.def, an OPTIONAL one
	 * under #ifdef NAME, which no macro can expand to: scripts/layout.sh
	 * writes these lines from layout.def.
	 */
#include "layout-items.h"
}
