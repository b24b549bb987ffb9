/*
 * Events to the sink: tr_emit (with the event's call stack under
 * --stacks) and tr_capture_stack (a fatal signal's full backtrace).
 * Calls down only: thread.c for sites, stack.c for the walks.
 */
#include <string.h>

#include "symbolizer/sym.h"
#include "trace/log.h"
#include "tracer_int.h"

/* Last-resort resumes of unsignalled waiters between two events. */
#define RESCUE_TRIES 64

void tr_emit(struct tracer *tr, struct tthread *t, enum avt_kind kind, uint64_t obj,
	     uint64_t obj2, uint64_t site, uint16_t flags, uint16_t size)
{
	if (tree_muted(tr))
		return; /* an ancestor's, before the fork path's end */
	struct avt_event ev;
	memset(&ev, 0, sizeof ev);
	ev.seq = tr->seq++;
	ev.thread = t->lid;
	ev.tindex = t->nevents++;
	ev.kind = (uint16_t)kind;
	ev.flags = flags;
	ev.obj = obj;
	ev.obj2 = obj2;
	ev.size = size;
	site_in(&tr->proc->as.mods, site, &ev.site_mod, &ev.site_off); /* inline: every event */
	if (kind == AVT_EV_START)
		tr->proc->nstarted++;
	t->idle_ns = 0;
	tr->rescue = RESCUE_TRIES;
	tr->stats.events++;
	if (tr->sink.event && tr->sink.event(tr->sink.ctx, tr, &ev) < 0)
		tr->sink_stop = true;
	if (tr->opts.stack_depth && tr->sink.stack && site && kind != AVT_EV_FATAL_SIGNAL) {
		struct avt_frame f[MAX_STACK_DEPTH];
		/* a create is emitted deep inside pthread_create: walk from its
		 * entry */
		int n = stack_capture(tr, t, site, kind == AVT_EV_CREATE, f, (int)tr->opts.stack_depth);
		if (n > 0)
			tr->sink.stack(tr->sink.ctx, tr, ev.seq, f, (uint32_t)n);
	}
}

#define MAX_STACK 64

void tr_capture_stack(struct tracer *tr, struct tthread *t, uint64_t seq)
{
	if (!tr->sink.stack)
		return;
	if (!tr->proc->as.sym) {
		tr->proc->as.sym = sym_new();
		if (!tr->proc->as.sym || sym_add_process(tr->proc->as.sym, tr->proc->pid) < 0)
			return;
	}
	uint64_t pcs[MAX_STACK];
	struct avt_frame f[MAX_STACK];
	/* the unwinder must see the real return addresses, not trampolines */
	stack_unwinding(tr, t);
	int n = sym_backtrace(tr->proc->as.sym, tr->proc->pid, t->tid, pcs, MAX_STACK);
	if (n <= 0)
		return;
	memset(f, 0, sizeof f);
	for (int i = 0; i < n; i++)
		tracer_site(tr, pcs[i], &f[i].mod, &f[i].off);
	tr->sink.stack(tr->sink.ctx, tr, seq, f, (uint32_t)n);
}

