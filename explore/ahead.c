/*
 * SURW's look-ahead (ahead.h): the events the thread just picked makes
 * with no decision, and the walks it wins, drawn ahead on a copy of the
 * run (surw.c's state), through the tracer's view of the next pick
 * (tracer/view.h), its locks followed on the tracer's lock model (sim.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "sim.h"
#include "surw.h"

/* A copy to draw ahead with: its own view of the threads and scratch. */
static struct xp_surw *ahead_copy(const struct xp_surw *s)
{
	struct xp_surw *c = malloc(sizeof *c);
	if (!c)
		return NULL;
	*c = *s;
	c->look.t = malloc((s->look.n ? s->look.n : 1) * sizeof *c->look.t);
	if (!c->look.t) {
		free(c);
		return NULL;
	}
	memcpy(c->look.t, s->look.t, s->look.n * sizeof *c->look.t);
	c->look.cap = s->look.n;
	c->idx = c->sel = NULL;
	c->idxcap = 0;
	c->ahead = NULL; /* the draws are kept in the original */
	c->nahead = c->next_ahead = 0;
	return c;
}

static void ahead_free(struct xp_surw *c)
{
	if (!c)
		return;
	free(c->look.t);
	free(c->idx);
	free(c->sel);
	free(c);
}

static bool waited_for(const struct tracer_view *v, uint64_t obj)
{
	for (size_t i = 0; obj && i < v->nobjs; i++)
		if (v->objs[i] == obj)
			return true;
	return false;
}

static bool lock_op(const struct xp_rev *r)
{
	return r->kind == AVT_EV_ACQUIRE || r->kind == AVT_EV_RELEASE;
}

/* An event a thread can wait in the agent to make (a lock's, an unlock's,
 * an access stub's) */
static bool park_op(const struct xp_rev *r)
{
	return lock_op(r) || r->kind == AVT_EV_READ || r->kind == AVT_EV_WRITE || r->kind == AVT_EV_RMW;
}

/* The budget's walk through the threads of a view (xp_surw_budget). */
#define WALK_THREADS 64
struct walk {
	struct xp_surw *s;
	const struct tracer_view *v; /* NULL: the current thread alone, no draw */
	bool known;                /* v knows every held lock, and who[] is there */
	bool touched;              /* an event on what the others wait for: no more draws */
	struct xp_sim m;
	uint32_t pos[WALK_THREADS]; /* each thread's next recorded event */
	bool moved[WALK_THREADS];   /* its next is its recorded one (it ran, or it is the first) */
	uint32_t made[WALK_THREADS]; /* events it made in the walk */
	size_t cur;                /* the view index of the thread making events */
	uint32_t cl, p;            /* that thread, its next recorded event */
	uint32_t dec_lid, dec_pos; /* the event a pick has decided, if any */
	struct xp_surw *c;         /* the copy the draws are made on */
	uint32_t lids[WALK_THREADS];
	/* the budget */
	struct xp_rev *ev;
	uint32_t *who;
	bool *extras;
	size_t max, k;
};

/* Is view thread i offered at a pick where cur runs? */
static bool walk_offered(struct walk *w, size_t i)
{
	const struct tracer_view_thread *t = &w->v->thr[i];
	if (i == w->cur)
		return true;
	if (w->moved[i]) {
		const struct xp_rev *r = xp_rec_event(w->s->look.rec, t->lid, w->pos[i]);
		return !r || r->kind != AVT_EV_ACQUIRE || xp_sim_is_free(&w->m, r->obj);
	}
	return !t->lock || xp_sim_is_free(&w->m, t->lock);
}

/* The view's threads and locks as the walk starts (v NULL when the view
 * cannot be followed: too many threads, or lid not among them). */
static void walk_view(struct walk *w, uint32_t lid, const struct tracer_view *v)
{
	const struct xp_surw *s = w->s;
	size_t cur = SIZE_MAX;

	if (v && v->n > WALK_THREADS)
		v = NULL;
	for (size_t i = 0; v && i < v->n; i++) {
		uint32_t t = v->thr[i].lid;
		w->pos[i] = t < s->look.n ? s->look.t[t].done : 0;
		if (t == lid)
			cur = i;
	}
	if (cur == SIZE_MAX)
		v = NULL;
	w->v = v;
	w->cur = cur;
	w->known = v && w->who && v->locks_known && v->nlocks <= XP_SIM_LOCKS;
	for (size_t i = 0; w->known && i < v->nlocks; i++)
		xp_sim_hold(&w->m, v->locks[i].obj, v->locks[i].owner, v->locks[i].count);
	/* the locks the others wait to take (and, without the held locks
	 * known, the running thread's holds on them) */
	for (size_t i = 0; v && i < v->n; i++) {
		const struct mlock *l = v->thr[i].lock ? xp_sim_at(&w->m, v->thr[i].lock) : NULL;
		if (l && !w->known && v->thr[i].held)
			xp_sim_hold(&w->m, v->thr[i].lock, lid, v->thr[i].held);
	}
	if (v)
		w->moved[cur] = true;
}

/* The walk's copy, brought to where the walk stands. */
static void walk_sync(struct walk *w)
{
	const struct xp_surw *s = w->s;
	struct xp_surw *c = w->c;

	w->pos[w->cur] = w->p;
	for (size_t i = 0; i < w->v->n; i++) {
		uint32_t t = w->v->thr[i].lid;
		if (w->moved[i] && t < c->look.n) {
			c->look.t[t].done = w->pos[i];
			c->look.t[t].made = s->look.t[t].made + w->made[i];
			c->look.t[t].spins = 0;
			c->look.t[t].parked = false;
		}
	}
}

/* Another thread, win, wins the draw at r: a hand-over to it, if it can
 * wait its turn in the agent and this thread can wait for its own.
 * false: the budget ends. */
static bool walk_handover(struct walk *w, const struct xp_rev *r, uint32_t win)
{
	struct xp_surw *s = w->s;
	const struct tracer_view *v = w->v;
	size_t wi = 0;

	while (wi < v->n && v->thr[wi].lid != win)
		wi++;
	if (!w->known || !park_op(r) || wi == v->n || win >= s->look.n)
		return false;
	const struct xp_rev *wr = xp_rec_event(s->look.rec, win, w->pos[wi]);
	if (!wr || !park_op(wr) ||
	    (!w->moved[wi] && (v->thr[wi].park != wr->kind || v->thr[wi].park_obj != wr->obj)))
		return false;
	s->ahead[s->nahead++] = (struct xp_ahead){ win, w->pos[wi], wr->kind, wr->obj, w->c->rng, w->c->walks };
	w->moved[wi] = true;
	w->cur = wi;
	w->cl = win;
	w->p = w->dec_pos = w->pos[wi];
	w->dec_lid = win;
	return true;
}

enum { WALK_END, WALK_ON, WALK_HANDED };

/* The draw at the current thread's interesting event r, made now on the
 * copy: WALK_ON when it picks the current thread (the event is then
 * made), WALK_HANDED after a hand-over, WALK_END when the budget ends. */
static int walk_draw(struct walk *w, const struct xp_rev *r)
{
	struct xp_surw *s = w->s;
	const struct tracer_view *v = w->v;

	if (!v || w->touched || s->nahead == SURW_AHEAD)
		return WALK_END;
	if (!w->c && !(w->c = ahead_copy(s)))
		return WALK_END;
	walk_sync(w);
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++)
		if (walk_offered(w, i))
			w->lids[n++] = v->thr[i].lid;
	size_t pick = n ? xp_surw_pick(w->c, w->lids, n) : n;
	if (pick >= n)
		return WALK_END;
	uint32_t win = w->lids[pick];
	if (win != w->cl)
		return walk_handover(w, r, win) ? WALK_HANDED : WALK_END;
	s->ahead[s->nahead++] = (struct xp_ahead){ w->cl, w->p, r->kind, r->obj, w->c->rng, w->c->walks };
	w->dec_lid = w->cl;
	w->dec_pos = w->p;
	return WALK_ON;
}

/* The locks r takes or releases, followed; what the others wait for,
 * touched.  false: the model would not have it so (the budget ends). */
static bool walk_follow(struct walk *w, const struct xp_rev *r)
{
	if (lock_op(r) && (w->known || xp_sim_find(&w->m, r->obj))) {
		if (!xp_sim_step(&w->m, w->cl, r)) {
			if (w->known)
				return false; /* the model would not have it so */
			w->touched = true;
		}
	} else if (r->kind == AVT_EV_WAIT || xp_sim_find(&w->m, r->obj)) {
		w->touched = true; /* a wait releases a mutex not in obj */
	}
	if (w->v && waited_for(w->v, r->obj))
		w->touched = true;
	return true;
}

/* r goes into the budget. */
static void walk_emit(struct walk *w, const struct xp_rev *r)
{
	w->ev[w->k] = *r;
	if (w->v)
		w->made[w->cur]++;
	if (w->who)
		w->who[w->k] = w->cl;
	/* an event the recording does not have, before this one: at its
	 * pick the thread goes on (choose's first rule) */
	if (w->extras)
		w->extras[w->k] = !xp_surw_interesting_at(w->s, w->cl, w->p);
	w->k++;
	w->p++;
}

/* Past its recording: its next is never interesting, so the current
 * thread is picked again at every event (choose's first rule): any
 * events, kind 0 (the picker cuts them where its spin count could end). */
static void walk_fill(struct walk *w)
{
	for (; w->k < w->max; w->k++) {
		w->ev[w->k] = (struct xp_rev){ 0, 0, AVT_EV_NONE, { 0 } };
		w->who[w->k] = w->cl;
		if (w->extras)
			w->extras[w->k] = false;
	}
}

static void walk_run(struct walk *w)
{
	const struct xp_surw *s = w->s;

	while (w->k < w->max) {
		const struct xp_rev *r = xp_rec_event(s->look.rec, w->cl, w->p);
		if (!r && w->who) {
			walk_fill(w);
			break;
		}
		if (!r)
			break;
		/* a lock held by another: the thread cannot go on (nor wait in
		 * the agent for a turn the walk would give it); the pick decides */
		if (w->known && r->kind == AVT_EV_ACQUIRE && !xp_sim_is_free(&w->m, r->obj) &&
		    model_holder(&w->m.m, r->obj) != w->cl)
			break;
		/* picked to make this very event: no draw (choose's first rule) */
		bool decided = w->cl == w->dec_lid && w->p == w->dec_pos;
		if (xp_surw_interesting_at(s, w->cl, w->p) && !decided) {
			int d = walk_draw(w, r);
			if (d == WALK_END)
				break;
			if (d == WALK_HANDED)
				continue;
		}
		if (!walk_follow(w, r))
			break;
		walk_emit(w, r);
	}
}

/* The current thread, once picked, is picked again at each of its next
 * events that is not interesting (choose's first rule), with no draw:
 * those events need no decision, as long as they are the recorded ones
 * xp_look_next reads (each then moves the look on by one).  A thread
 * past its recording gets none: nothing says what it does next.
 *
 * With a view of the next pick, it goes on through an interesting event
 * when the walk there would pick it again: the draw is made now, on a
 * copy, with the threads the view offers (the others are stopped, so
 * they and what they wait for stay as they are, but for the locks they
 * wait to take, whose acquires and releases by this thread are followed;
 * any other event of it on what they wait for ends the draws), and kept
 * for xp_surw_event to apply when that event comes.  A draw that picks
 * another thread ends the budget before its event, where the real pick
 * draws the same.
 *
 * Unless (who, and the view knows every held lock) the thread that gives
 * way is at an acquire or a release and the winner is a thread the agent
 * can hand the run token to (its next recorded event its request, an
 * acquire or release): then the budget goes on with the winner's events,
 * and so on, every thread's events from there on acquires and releases
 * whose locks are followed (a hand-over script: each event names its
 * thread in who[]). */
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
		      uint32_t *who, bool *extras, size_t max)
{
	s->nahead = s->next_ahead = 0;
	if (lid != s->cur || lid >= s->look.n || s->look.t[lid].parked)
		return 0;
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		return 0;
	w->s = s;
	w->ev = ev;
	w->who = who;
	w->extras = extras;
	w->max = max;
	walk_view(w, lid, v);
	/* the event it was picked for, if it has made none since */
	w->cl = lid;
	w->p = s->look.t[lid].done;
	w->dec_lid = s->cur;
	w->dec_pos = s->look.t[lid].made == s->cur_made ? w->p : UINT32_MAX;
	const struct xp_rev *first = xp_rec_event(s->look.rec, lid, w->p);
	if (first && first->kind == AVT_EV_START)
		w->p++;
	walk_run(w);
	size_t k = w->k;
	ahead_free(w->c);
	xp_sim_free(&w->m);
	free(w);
	return k;
}

size_t xp_surw_budget_op(void *run, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
			 uint32_t *who, bool *extras, size_t max)
{
	return xp_surw_budget(run, lid, v, ev, who, extras, max);
}
