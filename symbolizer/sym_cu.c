/*
 * The compilation unit around an address, without .debug_aranges.
 *
 * libdwfl finds a CU (and so a line, or the scopes of a pc) through
 * .debug_aranges only (elfutils 0.188), and clang emits none by default:
 * a clang-built program had no source lines at all.  When libdwfl finds
 * no CU, the module's CUs are scanned once for their address ranges
 * (DW_AT_low_pc/high_pc or DW_AT_ranges, through dwarf_ranges) into a
 * table sorted by address, searched by bisection from then on.
 */
#include "sym_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct sym_cu_range {
	Dwarf_Addr lo, hi; /* [lo, hi) in the module's DWARF addresses */
	size_t cu;         /* index into the table's dies */
};

static int range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_range(struct sym_cutab *t, Dwarf_Addr lo, Dwarf_Addr hi, size_t cu, size_t *cap)
{
	if (t->nranges == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		struct sym_cu_range *r = realloc(t->ranges, n * sizeof *r);
		if (!r)
			return -1;
		t->ranges = r;
		*cap = n;
	}
	t->ranges[t->nranges++] = (struct sym_cu_range){ lo, hi, cu };
	return 0;
}

static void build(struct sym_mod *m)
{
	struct sym_cutab *t = &m->cutab;
	size_t cap = 0, dcap = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = NULL;
	t->built = true;
	while ((cu = dwfl_module_nextcu(m->dm, cu, &bias))) {
		if (t->ndies == dcap) {
			size_t n = dcap ? 2 * dcap : 16;
			Dwarf_Die *d = realloc(t->dies, n * sizeof *d);
			if (!d)
				return;
			t->dies = d;
			dcap = n;
		}
		t->dies[t->ndies] = *cu;
		t->bias = bias; /* one module, one bias */
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
			if (hi > lo && add_range(t, lo, hi, t->ndies, &cap) < 0)
				return;
		t->ndies++;
	}
	if (t->nranges)
		qsort(t->ranges, t->nranges, sizeof *t->ranges, range_cmp);
}

Dwarf_Die *sym_mod_addrdie(struct sym_mod *m, Dwarf_Addr pc, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->dm, pc, bias);
	if (cu)
		return cu;
	struct sym_cutab *t = &m->cutab;
	if (!t->built)
		build(m);
	if (!t->nranges || pc < t->bias)
		return NULL;
	Dwarf_Addr a = pc - t->bias;
	/* the last range starting at or before a; CUs' ranges do not nest,
	 * but a few may overlap at a shared boundary: look back a little */
	size_t lo = 0, hi = t->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->ranges[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++)
		if (a < t->ranges[i - 1].hi) {
			*bias = t->bias;
			return &t->dies[t->ranges[i - 1].cu];
		}
	return NULL;
}

void sym_cutab_release(struct sym_cutab *t)
{
	free(t->ranges);
	free(t->dies);
	memset(t, 0, sizeof *t);
}
