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
		for (size_t i = pr->nlive; i-- > 0;)
			if (pr->live[i]->tid == tid && pr->live[i]->state != TS_DEAD)
				return pr->live[i];
	}
	return NULL;
}

#define FS_GONE UINT32_MAX

static size_t fs_hash(uint64_t fs, size_t cap)
{
	fs ^= fs >> 29;
	fs *= 0x9e3779b97f4a7c15ull;
	return (size_t)(fs >> 32) & (cap - 1);
}

/* fs's slot, or where it would go (the first deleted one on the way). */
static struct fs_slot *fs_slot(const struct process *p, uint64_t fs)
{
	struct fs_slot *gone = NULL;
	for (size_t i = fs_hash(fs, p->fscap);; i = (i + 1) & (p->fscap - 1)) {
		struct fs_slot *s = &p->fsmap[i];
		if (s->lid1 == FS_GONE) {
			if (!gone)
				gone = s;
		} else if (!s->lid1) {
			return gone ? gone : s;
		} else if (s->fs == fs) {
			return s;
		}
	}
}

/* Room for one more (at most half full, deleted slots counted). */
static void fs_grow(struct process *p)
{
	if (p->fscap && 2 * (p->fsused + 1) <= p->fscap)
		return;
	struct fs_slot *old = p->fsmap;
	size_t ocap = p->fscap;
	p->fscap = ocap ? ocap * 2 : 64;
	p->fsmap = calloc(p->fscap, sizeof *p->fsmap);
	BUG_ON(!p->fsmap);
	p->fsused = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].lid1 && old[i].lid1 != FS_GONE) {
			*fs_slot(p, old[i].fs) = old[i];
			p->fsused++;
		}
	free(old);
}

struct tthread *process_by_fs(const struct process *p, uint64_t fs)
{
	if (!fs || !p->fscap)
		return NULL;
	const struct fs_slot *s = fs_slot(p, fs);
	return s->lid1 && s->lid1 != FS_GONE && s->fs == fs ? p->thr[s->lid1 - 1] : NULL;
}

void process_set_fs(struct process *p, struct tthread *t, uint64_t fs)
{
	if (t->fs_base == fs)
		return;
	if (t->fs_base && process_by_fs(p, t->fs_base) == t)
		fs_slot(p, t->fs_base)->lid1 = FS_GONE;
	t->fs_base = fs;
	if (!fs)
		return;
	struct tthread *o = process_by_fs(p, fs);
	if (o) {
		o->fs_base = 0;
		fs_slot(p, fs)->lid1 = t->lid + 1;
		return;
	}
	fs_grow(p);
	*fs_slot(p, fs) = (struct fs_slot){ fs, t->lid + 1 };
	p->fsused++;
}

void process_prune(struct process *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nlive; i++)
		if (p->live[i]->state != TS_DEAD)
			p->live[n++] = p->live[i];
	p->nlive = n;
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
	if (pr->nlive == pr->caplive) {
		size_t ncap = pr->caplive ? pr->caplive * 2 : 16;
		struct tthread **n = realloc(pr->live, ncap * sizeof *n);
		BUG_ON(!n);
		pr->live = n;
		pr->caplive = ncap;
	}
	pr->live[pr->nlive++] = t;
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

