/*
 * The locks a look-ahead follows (sim.h).  Every change goes through the
 * tracer's model (model_acquire, model_release_lock); what this file adds
 * is the question the tracer asks its threads before it commits a lock
 * request (model.c's model_can_commit, which needs a tracer), asked of
 * the table alone, and the cap on the locks followed.
 */
#include "sim.h"
#include "tracer/view.h"

void xp_sim_free(struct xp_sim *s)
{
	model_release(&s->m);
}

struct mlock *xp_sim_find(struct xp_sim *s, uint64_t obj)
{
	return model_find(&s->m, obj);
}

struct mlock *xp_sim_at(struct xp_sim *s, uint64_t obj)
{
	struct mlock *l = model_find(&s->m, obj);
	if (l || s->m.n == XP_SIM_LOCKS)
		return l;
	return model_lock(&s->m, obj);
}

bool xp_sim_hold(struct xp_sim *s, uint64_t obj, uint32_t owner, uint32_t count)
{
	struct mlock *l = xp_sim_at(s, obj);
	if (!l)
		return false;
	bool readers = owner == TRACER_VIEW_READERS;
	l->owner = readers ? NO_THREAD : owner;
	l->count = readers ? 0 : count;
	l->readers = readers ? count : 0;
	return true;
}

bool xp_sim_is_free(struct xp_sim *s, uint64_t obj)
{
	const struct mlock *l = model_find(&s->m, obj);
	return !l || (l->owner == NO_THREAD && !l->readers);
}

bool xp_sim_step(struct xp_sim *s, uint32_t t, const struct xp_rev *r)
{
	const struct mlock *l = xp_sim_at(s, r->obj);
	bool first;
	if (!l)
		return false;
	if (r->kind == AVT_EV_ACQUIRE) {
		/* a write lock (the tracer's rule for mutexes: free, or
		 * recursively t's own) */
		if (l->readers || (l->owner != NO_THREAD && l->owner != t))
			return false;
		model_acquire(&s->m, r->obj, t, false, &first);
		return true;
	}
	/* a release of what t holds (a read-held lock is no one's here) */
	if (!model_owns(&s->m, r->obj, t))
		return false;
	return model_release_lock(&s->m, r->obj, t) >= 0;
}
