/*
 * Unwinders inside the target must see real return addresses.
 *
 * The tracer swaps return addresses for its trampoline (hooked calls whose
 * outcome matters; every user frame under --stacks).  An unwinder running
 * in the target reads those slots: a C++ exception, pthread_exit's and
 * pthread_cancel's forced unwind, backtrace().  Finding the trampoline
 * there, it has no unwind table for it and calls std::terminate.  So the
 * entry points of libgcc's unwinder are hooked transparently: at each, every
 * address the thread had swapped is put back (stack_unwinding) and the call
 * goes on.  The ends of those calls are then no longer seen (a call that an
 * exception left keeps its identity until a frame below it is walked).
 *
 * The unwinder is libgcc_s (loaded with libstdc++, or dlopen()ed by glibc
 * for the first pthread_exit), or linked into a static executable.
 */
#include <string.h>

#include "tracer_int.h"

static const char *const unwind_entries[] = {
	"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind", "_Unwind_Backtrace",
};
#define N_UNWIND (sizeof unwind_entries / sizeof unwind_entries[0])

static bool may_hold_unwinder(const struct tracer *tr, const struct elfmod *m)
{
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	return !strncmp(b, "libgcc_s", 8) || !strcmp(m->path, tr->exe);
}

void unwinders_plant_module(struct tracer *tr, const struct elfmod *m)
{
	struct elfsym syms[N_UNWIND];
	int has_symtab;
	char why[256];
	if (!may_hold_unwinder(tr, m) || elf_lookup_funcs(m->path, unwind_entries, N_UNWIND, syms, &has_symtab) <= 0)
		return;
	for (size_t i = 0; i < N_UNWIND; i++) {
		if (!syms[i].value)
			continue;
		uint64_t addr = m->bias + syms[i].value;
		if (bpt_find(&tr->proc->as.bpts, addr))
			continue;
		if (bpt_insert(&tr->proc->as.bpts, addr, BK_UNWIND, (int)i, why, sizeof why) < 0)
			avt_warn("cannot hook %s in '%s' (%s): a C++ exception or a thread exit through a watched call may terminate the program",
				 unwind_entries[i], m->path, why);
	}
}

void unwinders_plant(struct tracer *tr)
{
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		unwinders_plant_module(tr, &tr->proc->as.mods.m[i]);
}
