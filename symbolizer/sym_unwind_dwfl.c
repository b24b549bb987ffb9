/*
 * The libdwfl backend.  The Dwfl of the last process unwound is kept;
 * each call re-reads /proc/PID/maps (libdwfl keeps the modules that are
 * unchanged, with their parsed CFI) so libraries loaded since are seen.
 * assume_ptrace_stopped: the caller already holds the thread stopped, so
 * libdwfl must neither attach nor detach it.
 */
#include "sym_int.h"

#include <stdlib.h>

#include "trace/log.h"

struct dw_state {
	Dwfl *dwfl;
	pid_t pid;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static void dw_release(void *state)
{
	struct dw_state *st = state;
	if (st->dwfl)
		dwfl_end(st->dwfl);
	free(st);
}

static int report(Dwfl *dwfl, pid_t pid)
{
	dwfl_report_begin(dwfl);
	int rc = dwfl_linux_proc_report(dwfl, pid);
	if (dwfl_report_end(dwfl, NULL, NULL) != 0 && rc == 0)
		rc = -1;
	return rc;
}

/* A Dwfl attached to pid with its current module list, or NULL. */
static Dwfl *dwfl_for(struct dw_state *st, pid_t pid)
{
	if (st->dwfl && st->pid == pid)
		return report(st->dwfl, pid) == 0 ? st->dwfl : NULL;
	if (st->dwfl)
		dwfl_end(st->dwfl);
	st->pid = pid;
	st->dwfl = dwfl_begin(&proc_callbacks);
	if (!st->dwfl)
		return NULL;
	if (report(st->dwfl, pid) != 0 || dwfl_linux_proc_attach(st->dwfl, pid, true) != 0) {
		dwfl_end(st->dwfl);
		st->dwfl = NULL;
	}
	return st->dwfl;
}

struct frames {
	uint64_t *pcs;
	int n, max;
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct frames *f = arg;
	Dwarf_Addr pc;
	if (!dwfl_frame_pc(frame, &pc, NULL))
		return DWARF_CB_ABORT;
	f->pcs[f->n++] = pc;
	return f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int dw_backtrace(void **state, pid_t pid, pid_t tid, uint64_t *pcs, int max)
{
	struct dw_state *st = *state;
	if (!st && !(st = *state = calloc(1, sizeof(*st)))) {
		avt_error("cannot unwind thread %d: out of memory", (int)tid);
		return -1;
	}
	Dwfl *dwfl = dwfl_for(st, pid);
	if (!dwfl) {
		avt_error("cannot unwind thread %d: %s", (int)tid, dwfl_errmsg(-1));
		return -1;
	}
	struct frames f = { pcs, 0, max };
	int rc = dwfl_getthread_frames(dwfl, tid, frame_cb, &f);
	/* The end of the stack reads as an error on some systems: frames
	 * seen before it are the backtrace. */
	if (rc == -1 && f.n == 0) {
		avt_error("cannot unwind thread %d: %s", (int)tid, dwfl_errmsg(-1));
		return -1;
	}
	return f.n;
}

const struct sym_unwinder sym_unwinder_dwfl = {
	.name = "dwfl",
	.backtrace = dw_backtrace,
	.release = dw_release,
};
