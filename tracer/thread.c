/*
 * The threads: by tid, by logical id, a new one (announced to the
 * sink), a signal kept for its next resume; and where an address lies
 * (module id, offset).  Below every feature: it calls none.
 */
#include <stdlib.h>

#include "trace/log.h"
#include "tracer_int.h"

/* The live thread tid, in whichever process it is. */
struct tthread *tr_by_tid(struct tracer *tr, pid_t tid)
{
	for (size_t p = 0; p < tr->nprocs; p++) {
		struct process *pr = tr->procs[p];
		for (size_t i = pr->nthr; i-- > 0;)
			if (pr->thr[i] && pr->thr[i]->tid == tid && pr->thr[i]->state != TS_DEAD)
				return pr->thr[i];
	}
	return NULL;
}

struct tthread *tracer_thread(struct tracer *tr, uint32_t lid)
{
	return lid < tr->proc->nthr ? tr->proc->thr[lid] : NULL;
}

size_t tracer_nthreads(const struct tracer *tr)
{
	return tr->proc->nthr;
}

struct tthread *thread_add(struct tracer *tr, pid_t tid, uint32_t parent)
{
	struct process *pr = tr->proc;
	if (pr->nthr == pr->capthr) {
		size_t ncap = pr->capthr ? pr->capthr * 2 : 16;
		struct tthread **n = realloc(pr->thr, ncap * sizeof *n);
		BUG_ON(!n);
		pr->thr = n;
		pr->capthr = ncap;
	}
	struct tthread *t = calloc(1, sizeof *t);
	BUG_ON(!t);
	t->priv = calloc(1, sizeof *t->priv);
	BUG_ON(!t->priv);
	t->priv->proc = pr;
	t->tid = tid;
	t->lid = (uint32_t)pr->nthr;
	t->parent = parent;
	t->born_seq = tr->seq;
	t->state = TS_NEW;
	pr->thr[pr->nthr++] = t;
	tr->stats.threads++;
	if (parent != NO_THREAD) {
		struct tthread *p = pr->thr[parent];
		t->nth_child = p->nchildren++;
	}
	struct avt_thread_rec rec = { t->lid, parent, t->nth_child, (uint32_t)tid };
	if (tr->sink.thread)
		tr->sink.thread(tr->sink.ctx, tr, &rec);
	return t;
}

void tracer_site(struct tracer *tr, uint64_t addr, uint16_t *mod, uint64_t *off)
{
	site_in(&tr->proc->as.mods, addr, mod, off);
}

/* A signal kept by the remote-syscall injector: delivered at t's next
 * resume (it is stopped at a trap: its pending signal is none). */
void tr_keep_signal(struct tthread *t, int sig)
{
	if (sig && !t->priv->pending_sig)
		t->priv->pending_sig = sig;
}

