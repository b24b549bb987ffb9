/*
 * The libunwind-ptrace backend.  The remote address space is created once;
 * its caches are flushed before every backtrace, because they are keyed by
 * address alone and the process may have exec'd or loaded libraries since
 * the last one (backtraces are rare: fatal signals, failures).
 */
#include "sym_int.h"

#include <libunwind-ptrace.h>

#include "trace/log.h"

static unw_addr_space_t lu_space(void **state)
{
	if (!*state) {
		unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
		if (!as)
			return NULL;
		*state = as;
	}
	unw_flush_cache(*state, 0, 0);
	return *state;
}

static int walk(unw_addr_space_t as, void *upt, pid_t tid, uint64_t *pcs, int max)
{
	unw_cursor_t c;
	int rc = unw_init_remote(&c, as, upt);
	if (rc < 0) {
		avt_error("cannot unwind thread %d: %s", (int)tid, unw_strerror(rc));
		return -1;
	}
	int n = 0;
	unw_word_t prev_sp = 0;
	do {
		unw_word_t ip, sp;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0 ||
		    unw_get_reg(&c, UNW_REG_SP, &sp) < 0)
			break;
		/* Callers' frames sit higher on the stack; a step that does
		 * not climb means a corrupt stack that could loop forever. */
		if (n > 0 && sp <= prev_sp)
			break;
		prev_sp = sp;
		pcs[n++] = ip;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

static int lu_backtrace(void **state, pid_t pid, pid_t tid, uint64_t *pcs, int max)
{
	(void)pid; /* _UPT reads the thread's own registers and memory */
	unw_addr_space_t as = lu_space(state);
	if (!as) {
		avt_error("cannot unwind thread %d: libunwind setup failed", (int)tid);
		return -1;
	}
	void *upt = _UPT_create(tid);
	if (!upt) {
		avt_error("cannot unwind thread %d: out of memory", (int)tid);
		return -1;
	}
	int n = walk(as, upt, tid, pcs, max);
	_UPT_destroy(upt);
	return n;
}

static void lu_release(void *state)
{
	unw_destroy_addr_space(state);
}

const struct sym_unwinder sym_unwinder_libunwind = {
	.name = "libunwind",
	.backtrace = lu_backtrace,
	.release = lu_release,
};
