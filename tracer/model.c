/*
 * The synchronization model: who holds which lock, who waits for what.
 *
 * Serialized execution hangs if it resumes a thread that will block in the
 * kernel on something only a stopped thread can release.  So the tracer
 * never commits an acquire of a lock another thread holds (a robust mutex
 * whose owner died is free: the next locker gets EOWNERDEAD), nor a join
 * of a live thread; cond/barrier/semaphore waiters are let run into the kernel,
 * then held stopped until an event on the same object may have released
 * them.  Everything here is updated at commit time, in event order.
 *
 * Every change of the lock table and every question asked of it is in this
 * file: hooks.c (and the agent's records, through hooks.c) change it with
 * model_acquire / model_release_lock / model_drop_owner / model_note_cond;
 * the loop, the record policy and the views ask model_can_run,
 * model_lock_offered, model_holder and model_view_locks.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/futex.h>

#include "ptrace_util.h"
#include "tracer_int.h"

void model_init(struct model *m)
{
	memset(m, 0, sizeof *m);
}

void model_release(struct model *m)
{
	free(m->tab);
	memset(m, 0, sizeof *m);
}

static size_t mhash(uint64_t a)
{
	a ^= a >> 31;
	a *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(a ^ (a >> 29));
}

struct mlock *model_find(struct model *m, uint64_t addr)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mhash(addr) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->tab[i].used)
			return NULL;
		if (m->tab[i].addr == addr)
			return &m->tab[i];
	}
}

static void model_grow(struct model *m)
{
	size_t ocap = m->cap;
	struct mlock *old = m->tab;
	m->cap = ocap ? ocap * 2 : 256;
	m->tab = calloc(m->cap, sizeof *m->tab);
	BUG_ON(!m->tab);
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].used)
			continue;
		size_t j = mhash(old[i].addr) & (m->cap - 1);
		while (m->tab[j].used)
			j = (j + 1) & (m->cap - 1);
		m->tab[j] = old[i];
	}
	free(old);
}

struct mlock *model_lock(struct model *m, uint64_t addr)
{
	struct mlock *l = model_find(m, addr);
	if (l)
		return l;
	if ((m->n + 1) * 2 > m->cap)
		model_grow(m);
	size_t i = mhash(addr) & (m->cap - 1);
	while (m->tab[i].used)
		i = (i + 1) & (m->cap - 1);
	l = &m->tab[i];
	l->used = true;
	l->addr = addr;
	l->owner = NO_THREAD;
	m->n++;
	return l;
}

/* glibc's pthread_mutex_t: __data.__kind at offset 16; bit 16 is
 * PTHREAD_MUTEX_ROBUST_NORMAL_NP. */
#define MUTEX_KIND_ROBUST 16

/* The owner of a robust mutex died holding it: the kernel marked the lock
 * FUTEX_OWNER_DIED, and the next locker gets it (with EOWNERDEAD) instead
 * of blocking.  A plain mutex stays locked for ever: that is a deadlock. */
static bool owner_died_robust(struct tracer *tr, const struct mlock *l)
{
	if (l->owner >= tr->proc->nthr || !tr->proc->thr[l->owner] || tr->proc->thr[l->owner]->state != TS_DEAD)
		return false;
	int32_t kind = 0;
	if (ptu_read(tr->proc->pid, l->addr + 16, &kind, sizeof kind) < 0)
		return false;
	return kind & MUTEX_KIND_ROBUST;
}

static bool lock_free_for(struct tracer *tr, uint64_t addr, uint32_t lid, bool write)
{
	struct mlock *l = model_find(&tr->proc->model, addr);
	if (!l)
		return true;
	if (l->owner != NO_THREAD && l->owner != lid && !owner_died_robust(tr, l))
		return false;
	if (write && l->readers)
		return false;
	/* relocking a lock one owns: recursive mutexes proceed, anything
	 * else would deadlock (hooks.c reads the mutex kind) */
	return true;
}

static struct tthread *thread_by_fs(struct tracer *tr, uint64_t fs)
{
	return process_by_fs(tr->proc, fs);
}

/* (here, not in futex.c: the model is below the features) */
bool model_futex_sleeps(struct tracer *tr, const struct tthread *t)
{
	const struct treq *q = &t->req;
	uint32_t v;
	if (ptu_read(tr->proc->pid, q->obj, &v, sizeof v) < 0)
		return false; /* EFAULT at once */
	if (t->priv->fx.cls == FC_LOCK_PI)
		return (v & FUTEX_TID_MASK) && (q->size & FUTEX_CMD_MASK) != FUTEX_TRYLOCK_PI;
	return v == (uint32_t)q->obj2;
}

int model_can_commit(struct tracer *tr, const struct tthread *t)
{
	const struct treq *q = &t->req;
	if (q->hook == HK_FUTEX) /* a wait that sleeps: never while another could run */
		return q->kind == AVT_EV_FUTEX_WAIT && model_futex_sleeps(tr, t) ? 2 : 1;
	if (q->hook < 0)
		return 1;
	if (q->never)
		return 0;
	switch (hook_defs[q->hook].op) {
	case OP_LOCK:
	case OP_SPINLOCK:
	case OP_WRLOCK:
		return lock_free_for(tr, q->obj, t->lid, true);
	case OP_RDLOCK: {
		struct mlock *l = model_find(&tr->proc->model, q->obj);
		return !l || l->owner == NO_THREAD || l->owner == t->lid;
	}
	case OP_TIMEDLOCK:
	case OP_TIMEDWRLOCK:
		/* held: it can only time out, so run it when nothing else can */
		return lock_free_for(tr, q->obj, t->lid, true) ? 1 : 2;
	case OP_TIMEDRDLOCK: {
		struct mlock *l = model_find(&tr->proc->model, q->obj);
		return !l || l->owner == NO_THREAD || l->owner == t->lid ? 1 : 2;
	}
	case OP_JOIN: {
		struct tthread *c = thread_by_fs(tr, q->obj);
		return !c || c->state == TS_DEAD;
	}
	default:
		return 1;
	}
}

int model_can_wake(struct tracer *tr, const struct tthread *t)
{
	const struct tracer_priv_thread *p = t->priv;
	uint64_t mutex = 0;
	switch (t->wait) {
	case TW_COND:
	case TW_TIMED: {
		/* a condition waiter re-acquires its mutex before returning */
		if (p->nrets)
			mutex = p->rets[p->nrets - 1].obj2;
		bool free_mutex = !mutex || lock_free_for(tr, mutex, t->lid, true);
		if (t->woken && free_mutex)
			return 1;
		if (t->wait == TW_TIMED && free_mutex)
			return 2;
		/* see below: glibc may need it to run a little, mutex or not
		 * (it only takes the mutex for real after its own bookkeeping) */
		return tr->rescue ? 2 : 0;
	}
	case TW_BARRIER:
	case TW_SEM:
		/* an unsignalled waiter may have been interrupted asleep on a
		 * glibc-internal lock (the condvar's own), not in its real wait;
		 * others then block on that lock: let it run, as a last resort,
		 * a bounded number of times between two events */
		return t->woken ? 1 : tr->rescue ? 2 : 0;
	case TW_FUTEX:
		/* a timed wait may always time out; an untimed one may have
		 * been woken by what the model does not see (another process,
		 * a thread's exit), as a bounded last resort */
		return t->woken ? 1 : t->priv->fx.timed || tr->rescue ? 2 : 0;
	case TW_UNKNOWN:
	case TW_SLEEP:
		return 2;
	default:
		return 1;
	}
}

/* ---- changes (hooks.c, at commit) */

bool model_acquire(struct model *m, uint64_t obj, uint32_t lid, bool reader, bool *first)
{
	struct mlock *l = model_lock(m, obj);
	*first = false;
	if (reader) {
		l->readers++;
		return false;
	}
	if (l->owner == lid) {
		l->count++;
		return true;
	}
	if (!l->acquired) {
		l->acquired = true;
		*first = true;
	}
	l->owner = lid;
	l->count = 1;
	return false;
}

int model_release_lock(struct model *m, uint64_t obj, uint32_t lid)
{
	struct mlock *l = model_find(m, obj);
	if (!l)
		return -1;
	if (l->owner == lid) {
		if (--l->count)
			return 1;
		l->owner = NO_THREAD;
		return 0;
	}
	if (l->readers) {
		l->readers--;
		return 0;
	}
	return -1;
}

void model_drop_owner(struct model *m, uint64_t obj, uint32_t lid)
{
	struct mlock *l = model_find(m, obj);
	if (l && l->owner == lid) {
		l->owner = NO_THREAD;
		l->count = 0;
	}
}

bool model_note_cond(struct model *m, uint64_t obj)
{
	struct mlock *c = model_lock(m, obj);
	if (c->is_cond)
		return false;
	c->is_cond = true;
	return true;
}

/* ---- queries */

bool model_owns(struct model *m, uint64_t obj, uint32_t lid)
{
	struct mlock *l = model_find(m, obj);
	return l && l->owner == lid;
}

uint32_t model_holder(struct model *m, uint64_t obj)
{
	struct mlock *l = model_find(m, obj);
	return l ? l->owner : NO_THREAD;
}

int model_can_run(struct tracer *tr, const struct tthread *t)
{
	switch (t->state) {
	case TS_READY:
		return 1;
	case TS_REQ:
		return model_can_commit(tr, t);
	case TS_KWAIT:
		return model_can_wake(tr, t);
	default:
		return 0;
	}
}

bool model_lock_offered(struct tracer *tr, const struct tthread *o, uint32_t self,
			uint64_t *lock, uint32_t *held)
{
	if (o->state != TS_REQ || o->req.never || o->req.hook < 0 ||
	    (hook_defs[o->req.hook].op != OP_LOCK && hook_defs[o->req.hook].op != OP_SPINLOCK))
		return false;
	const struct mlock *l = model_find(&tr->proc->model, o->req.obj);
	if (l && (l->readers || (l->owner != NO_THREAD && l->owner != self)))
		return false;
	*lock = o->req.obj;
	*held = l && l->owner == self ? (l->count ? l->count : 1) : 0;
	return true;
}

void model_view_locks(struct tracer *tr, struct tracer_view *v)
{
	v->nlocks = 0;
	v->locks_known = false;
	for (size_t i = 0; i < tr->proc->model.cap; i++) {
		const struct mlock *l = &tr->proc->model.tab[i];
		if (!l->used || (l->owner == NO_THREAD && !l->readers))
			continue;
		if (v->nlocks == TRACER_VIEW_LOCKS)
			return;
		if (l->owner != NO_THREAD &&
		    (l->owner >= tr->proc->nthr || !tr->proc->thr[l->owner] || tr->proc->thr[l->owner]->state == TS_DEAD))
			return;
		v->locks[v->nlocks++] = (struct tracer_view_lock){
			l->addr, l->owner != NO_THREAD ? l->owner : TRACER_VIEW_READERS,
			l->owner != NO_THREAD ? (l->count ? l->count : 1) : l->readers };
	}
	v->locks_known = true;
}
