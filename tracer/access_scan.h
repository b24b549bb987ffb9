/*
 * The access feature's planting decisions (access_scan.c): which
 * instructions of a module's code become access sites, and which of them
 * may be planted in the short form (a cover: displaced with the
 * instructions after it).  No ptrace, no ELF: bytes in, candidates out;
 * tests/unit/test_access_scan.c holds them to it.
 */
#ifndef AVT_ACCESS_SCAN_H
#define AVT_ACCESS_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"

struct func {
	uint64_t lo, hi;  /* ELF virtual addresses */
	bool skip;        /* the C runtime's start-up and tear-down code */
	const char *name; /* while the ELF is open */
};

struct cand {
	uint64_t addr;       /* runtime */
	struct dec_insn in;
	uint8_t cover;       /* a short instruction: the bytes displaced with
	                        the ones after it (dec_cover), else 0 */
	const char *func;    /* its function's name, during the scan (NULL: none) */
};

/* A run of code scanned as one (runtime addresses), in groups mode. */
struct scan_piece {
	uint64_t lo, hi;
	bool bad; /* an indirect jmp in it, or left undecoded */
};

struct scan_edge {
	uint64_t from, to;
};

struct scan {
	struct cand *c;
	size_t n, cap;
	uint64_t *targets;    /* every direct branch's target in the module */
	size_t ntargets, captargets;
	const char **indirect; /* functions with an indirect jmp, or not decoded */
	size_t nindirect, capindirect;
	bool no_covers;       /* code not decoded that has no symbol */
	/* A module with no symbol table (groups on): its functions are its
	 * .eh_frame FDEs, with no name to say which belong together, so each
	 * scanned piece is kept with its direct jumps, and a piece that jumps
	 * indirectly or was left undecoded takes the covers of every piece
	 * its jumps connect it to (scan_check_covers). */
	bool groups;
	struct scan_piece *pieces;
	size_t npieces, cappieces;
	struct scan_edge *edges; /* direct jmp/jcc (not calls) */
	size_t nedges, capedges;
	unsigned undecodable;
	unsigned untrusted;   /* functions left alone: their decoding is not sure */
	struct func ro[32];   /* read-only data (runtime addresses): .rodata,
	                         .got (read-only after relocation), ... */
	size_t nro;
};

/* One function (or a run of code with no symbol) at runtime address rt,
 * named name (NULL: no symbol): its candidate sites appended to sc. */
void scan_func(struct dec *dec, struct scan *sc, const uint8_t *code, size_t len, uint64_t rt,
	       const char *name);
/* Once a module's functions are scanned: covers nothing can jump into
 * stay, the others become 0 (landing_pads: C++ exceptions land anywhere
 * in a function: no cover at all; groups: none in a piece connected by
 * direct jumps to a bad one).  The candidates' names are cleared. */
void scan_check_covers(struct scan *sc, bool landing_pads);
/* Appends v (size bytes) to the growable array *a of *n (capacity *cap). */
bool scan_push(void **a, size_t *n, size_t *cap, size_t size, const void *v);

#endif
