/*
 * The libunwind-ptrace backend.  One remote address space is kept across
 * calls so libunwind's unwind-table cache pays off; it is flushed when the
 * process changes, since the cache is keyed by address alone.
 */
#include "sym_int.h"

#include <libunwind-ptrace.h>
#include <stdlib.h>

#include "trace/log.h"

struct lu_state {
	unw_addr_space_t as;
	pid_t pid;
};

static struct lu_state *lu_state_get(void **state, pid_t pid)
{
	struct lu_state *st = *state;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return NULL;
		st->as = unw_create_addr_space(&_UPT_accessors, 0);
		if (!st->as) {
			free(st);
			return NULL;
		}
		unw_set_caching_policy(st->as, UNW_CACHE_GLOBAL);
		st->pid = pid;
		*state = st;
	}
	if (st->pid != pid) {
		unw_flush_cache(st->as, 0, 0);
		st->pid = pid;
	}
	return st;
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
	struct lu_state *st = lu_state_get(state, pid);
	if (!st) {
		avt_error("cannot unwind thread %d: libunwind setup failed", (int)tid);
		return -1;
	}
	void *upt = _UPT_create(tid);
	if (!upt) {
		avt_error("cannot unwind thread %d: out of memory", (int)tid);
		return -1;
	}
	int n = walk(st->as, upt, tid, pcs, max);
	_UPT_destroy(upt);
	return n;
}

static void lu_release(void *state)
{
	struct lu_state *st = state;
	unw_destroy_addr_space(st->as);
	free(st);
}

const struct sym_unwinder sym_unwinder_libunwind = {
	.name = "libunwind",
	.backtrace = lu_backtrace,
	.release = lu_release,
};
