/*
 * Function ranges of a module with no symbol table, from its .eh_frame
 * FDEs (fde.c): every function the compiler emitted call-frame
 * information for, hot and .cold parts apart.  ELF only, no ptrace.
 */
#ifndef AVT_FDE_H
#define AVT_FDE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t lo, hi; /* ELF virtual addresses */
	char name[24];   /* "fde@ADDR": a name for the scan, no '.' in it */
};

/* The FDE ranges of e, sorted, disjoint: every FDE of its .eh_frame
 * whose CIE's pointer encoding is absolute or pc-relative (all a linked
 * file holds), empty functions left out (none: the caller scans as if
 * there were no FDE).  *out is malloc'd, the caller's to free; returns
 * their number. */
size_t fde_ranges(Elf *e, struct fde_range **out);

#endif
