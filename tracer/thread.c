/*
 * The session's threads: by tid, by logical id, a new one (announced to the
 * sink), a signal kept for its next resume; and where an address lies
 * (module id, offset).  Below every feature: it calls none.
 */
#include <stdlib.h>

#include "trace/log.h"
#include "tracer_int.h"

struct tthread *tr_by_tid(struct tracer *tr, pid_t tid)
{
	for (size_t i = tr->nthr; i-- > 0;)
		if (tr->thr[i] && tr->thr[i]->tid == tid && tr->thr[i]->state != TS_DEAD)
			return tr->thr[i];
	return NULL;
}

struct tthread *tracer_thread(struct tracer *tr, uint32_t lid)
{
	return lid < tr->nthr ? tr->thr[lid] : NULL;
}

size_t tracer_nthreads(const struct tracer *tr)
{
	return tr->nthr;
}

struct tthread *thread_add(struct tracer *tr, pid_t tid, uint32_t parent)
{
	if (tr->nthr == tr->capthr) {
		size_t ncap = tr->capthr ? tr->capthr * 2 : 16;
		struct tthread **n = realloc(tr->thr, ncap * sizeof *n);
		BUG_ON(!n);
		tr->thr = n;
		tr->capthr = ncap;
	}
	struct tthread *t = calloc(1, sizeof *t);
	BUG_ON(!t);
	t->priv = calloc(1, sizeof *t->priv);
	BUG_ON(!t->priv);
	t->tid = tid;
	t->lid = (uint32_t)tr->nthr;
	t->parent = parent;
	t->born_seq = tr->seq;
	t->state = TS_NEW;
	tr->thr[tr->nthr++] = t;
	tr->stats.threads++;
	if (parent != NO_THREAD) {
		struct tthread *p = tr->thr[parent];
		t->nth_child = p->nchildren++;
	}
	struct avt_thread_rec rec = { t->lid, parent, t->nth_child, (uint32_t)tid };
	if (tr->sink.thread)
		tr->sink.thread(tr->sink.ctx, tr, &rec);
	return t;
}

void tracer_site(struct tracer *tr, uint64_t addr, uint16_t *mod, uint64_t *off)
{
	site_in(&tr->as.mods, addr, mod, off);
}

/* A signal kept by the remote-syscall injector: delivered at t's next
 * resume (it is stopped at a trap: its pending signal is none). */
void tr_keep_signal(struct tthread *t, int sig)
{
	if (sig && !t->priv->pending_sig)
		t->priv->pending_sig = sig;
}

