/*
 * Backtraces of ptrace-stopped threads, through one of two backends behind
 * struct sym_unwinder: libunwind-ptrace (the default: it is what the
 * architecture names, and it needs no module list) and libdwfl's
 * unwinder (the same library that symbolizes, selectable for targets whose
 * unwind tables libunwind mis-reads).
 */
#include "sym_int.h"

#include <string.h>

#include "trace/log.h"

static const struct sym_unwinder *const unwinders[] = {
	&sym_unwinder_libunwind,
	&sym_unwinder_dwfl,
};

static const struct sym_unwinder *current(const struct sym *s)
{
	return s->unw ? s->unw : unwinders[0];
}

void sym_unwind_release(struct sym *s)
{
	if (s->unw_state)
		current(s)->release(s->unw_state);
	s->unw_state = NULL;
}

int sym_set_unwinder(struct sym *s, const char *name)
{
	for (size_t i = 0; i < sizeof(unwinders) / sizeof(unwinders[0]); i++) {
		if (strcmp(unwinders[i]->name, name) != 0)
			continue;
		sym_unwind_release(s);
		s->unw = unwinders[i];
		return 0;
	}
	return -1;
}

const char *sym_unwinder_name(const struct sym *s)
{
	return current(s)->name;
}

int sym_backtrace(struct sym *s, pid_t pid, pid_t tid, uint64_t *pcs, int max)
{
	if (max <= 0)
		return 0;
	const struct sym_unwinder *u = current(s);
	s->unw = u;
	return u->backtrace(&s->unw_state, pid, tid, pcs, max);
}
