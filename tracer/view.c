/*
 * The view of the threads a policy looks ahead with (tracer_pick_view,
 * view.h): who can run, what each waits for, the locks held.  Reads the
 * model (model.c) and the agent's hand-over kinds (agent.c).
 */
#include "tracer_int.h"

size_t tracer_pick_view(struct tracer *tr, const struct tthread *self, struct tracer_view *v)
{
	size_t n = 0, no = 0;
	if (self->preempted) /* the next pick would make it give way first */
		return 0;
	for (size_t i = 0; i < tr->proc->nlive; i++) {
		struct tthread *o = tr->proc->live[i];
		int c = 0;
		if (o->state == TS_DEAD)
			continue;
		if (o->state == TS_NEW || (o != self && o->state == TS_RUNNING))
			return 0; /* its first stop, or its request, may come at any time */
		c = o == self ? 1 : model_can_run(tr, o);
		uint64_t dep[3] = { 0, 0, 0 }, lock = 0;
		uint32_t held = 0;
		/* about to lock what is free or self's alone: offered while it
		 * is free, which only self's events change */
		if (o != self && model_lock_offered(tr, o, self->lid, &lock, &held))
			c = 1;
		uint16_t park = c == 1 && o != self ? agent_park_kind(tr, o) : 0;
		if (c == 1) {
			if (n == TRACER_VIEW_THREADS)
				return 0;
			v->thr[n++] = (struct tracer_view_thread){ o->lid, held, lock, park,
								   park ? o->req.obj : 0 };
		}
		if (park)
			continue; /* an access is no wait; a lock is followed in locks[] */
		if (!lock && o != self && o->state == TS_REQ) {
			dep[0] = o->req.obj;
			dep[1] = o->req.obj2;
		} else if (!lock && o != self && o->state == TS_KWAIT) {
			dep[0] = o->wait_obj;
			dep[1] = o->priv->nrets ? o->priv->rets[o->priv->nrets - 1].obj2 : 0;
			dep[2] = o->priv->nrets ? o->priv->rets[o->priv->nrets - 1].obj : 0;
		}
		for (int k = 0; k < 3; k++) {
			if (!dep[k])
				continue;
			if (no == TRACER_VIEW_OBJS)
				return 0;
			v->objs[no++] = dep[k];
		}
	}
	v->n = n;
	v->nobjs = no;
	model_view_locks(tr, v);
	return n;
}

