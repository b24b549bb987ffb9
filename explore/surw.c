/*
 * SURW, selectively uniform random walk (after "Selectively Uniform
 * Concurrency Testing", ASPLOS'25), over a serializing scheduler.
 *
 * Uniform random walk.  If thread i has n_i events left, the interleavings
 * of what is left number (n_1 + ... + n_k)! / (n_1! ... n_k!), and those
 * that start with thread i are a fraction n_i / (n_1 + ... + n_k) of them.
 * So choosing thread i with that probability at every step, and going on
 * the same way, draws every interleaving with the same probability (when
 * no thread ever blocks).  A uniform choice of thread at every step does
 * not: it favours interleavings where the threads alternate early.
 *
 * Selective.  The interleavings of all events are too many for any bug
 * to be likely.  Each run draws a few *interesting* objects (nvars of the
 * variables and locks that the recording shows two threads touching; with
 * XP_VARS_RANDOM their number is drawn first, uniformly from 1 to all of
 * them and one more choice, every event; every event when there are none
 * or nvars is 0) and applies the
 * walk to the events on them
 * only: a thread's weight is the number of its remaining events on the
 * interesting objects, and a choice is made only when every runnable
 * thread is about to make an interesting event.  Until then the current
 * thread keeps running while its next event is not interesting, and
 * otherwise a thread whose next event is not interesting runs (chosen at
 * random), so that every thread is brought up to its next interesting
 * event before the walk decides who makes it.  The interleavings of the
 * interesting events are then uniform, and every interleaving of all
 * events remains possible (another draw of objects).
 *
 * Counts and next events come from the recording (xp_look: a thread that
 * has made i events is about to make its recorded event i; a run that
 * diverges is put back in step where it can).  A thread the recording
 * does not know, or that ran past it, has no known next event: it counts
 * as not interesting.  A decision holds until the thread has made its
 * event: a thread picked again after its time slice ended without one
 * (computing on its way) is not drawn again, and counts as spinning
 * only after SURW_COMMITTED_SLICES times as many slices.  A thread that spins is parked (xp_look_yield) and
 * chosen only when nothing else can run.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"
#include "trace/log.h"

#define SURW_AHEAD 256

struct xp_surw {
	struct xp_look look;
	struct xp_rng rng;
	uint64_t seed, run_index;
	uint64_t *objs;        /* interesting objects (empty: every event) */
	size_t nobjs;
	bool all;              /* no objects drawn: every event is interesting */
	uint32_t **suf;        /* per recorded thread: interesting events from index i on */
	uint32_t nrec;
	uint32_t cur;          /* last thread picked, UINT32_MAX before any */
	uint32_t cur_made;     /* its events made when it was picked */
	uint32_t committed_spins; /* slices it has run since, without its event */
	uint64_t walks;        /* weighted choices made */
	size_t *idx, *sel;     /* scratch for picks */
	size_t idxcap;
	/* walks decided ahead (xp_surw_budget): at its event number `done`
	 * (kind, obj) the thread `lid` wins; the state the pick leaves */
	struct ahead {
		uint32_t lid, done;
		uint16_t kind;
		uint64_t obj;
		struct xp_rng rng;
		uint64_t walks;
	} *ahead;              /* SURW_AHEAD of them (not in the struct: a
	                          budget copies the struct to draw on) */
	size_t nahead, next_ahead;
};

bool xp_surw_interesting(const struct xp_surw *s, uint64_t obj)
{
	if (!obj)
		return false;
	if (s->all)
		return true;
	for (size_t i = 0; i < s->nobjs; i++)
		if (s->objs[i] == obj)
			return true;
	return false;
}

/* Draws min(nvars, shared) of the shared objects, uniformly. */
static int draw_objects(struct xp_surw *s, const struct xp_config *c)
{
	uint64_t *shared;
	size_t nshared;

	if (xp_rec_shared(c->rec, &shared, &nshared) < 0)
		return -1;
	if (nshared == 0 || c->nvars == 0) {
		free(shared);
		s->all = true;
		return 0;
	}
	/* partial Fisher-Yates: the first m are a uniform sample */
	size_t m = c->nvars < nshared ? c->nvars : nshared;
	if (c->nvars == XP_VARS_RANDOM) {
		/* 1 .. nshared objects, or (nshared + 1) every event */
		m = 1 + (size_t)xp_rng_below(&s->rng, nshared + 1);
		if (m > nshared) {
			free(shared);
			s->all = true;
			return 0;
		}
	}
	for (size_t i = 0; i < m; i++) {
		size_t j = i + (size_t)xp_rng_below(&s->rng, nshared - i);
		uint64_t tmp = shared[i];
		shared[i] = shared[j];
		shared[j] = tmp;
	}
	s->objs = shared;
	s->nobjs = m;
	return 0;
}

static int suffixes(struct xp_surw *s, const struct xp_rec *rec)
{
	s->nrec = xp_rec_nthreads(rec);
	s->suf = calloc(s->nrec ? s->nrec : 1, sizeof *s->suf);
	if (!s->suf)
		return -1;
	for (uint32_t t = 0; t < s->nrec; t++) {
		size_t n = xp_rec_count(rec, t);
		uint32_t *a = malloc((n + 1) * sizeof *a);
		if (!a)
			return -1;
		a[n] = 0;
		for (size_t i = n; i-- > 0;)
			a[i] = a[i + 1] + xp_surw_interesting(s, xp_rec_event(rec, t, i)->obj);
		s->suf[t] = a;
	}
	return 0;
}

struct xp_surw *xp_surw_new(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	struct xp_surw *s = calloc(1, sizeof *s);

	if (!s) {
		avt_error("explore: out of memory");
		return NULL;
	}
	xp_look_init(&s->look, c->rec, c->yield_limit);
	s->ahead = malloc(SURW_AHEAD * sizeof *s->ahead);
	if (!s->ahead) {
		avt_error("explore: out of memory");
		goto fail;
	}
	s->seed = seed;
	s->run_index = run_index;
	s->cur = UINT32_MAX;
	xp_rng_seed_run(&s->rng, seed, run_index);
	if (draw_objects(s, c) < 0)
		goto fail;
	if (suffixes(s, c->rec) < 0) {
		avt_error("explore: out of memory");
		goto fail;
	}
	return s;
fail:
	xp_surw_free(s);
	return NULL;
}

void xp_surw_free(struct xp_surw *s)
{
	if (!s)
		return;
	xp_look_release(&s->look);
	for (uint32_t t = 0; s->suf && t < s->nrec; t++)
		free(s->suf[t]);
	free(s->suf);
	free(s->objs);
	free(s->idx);
	free(s->sel);
	free(s->ahead);
	free(s);
}

int xp_surw_event(struct xp_surw *s, const struct avt_event *ev)
{
	if (s->next_ahead < s->nahead) {
		/* the walk drawn ahead for this event: what its pick did */
		const struct ahead *a = &s->ahead[s->next_ahead];
		if (ev->thread == a->lid && a->lid < s->look.n && s->look.t[a->lid].done == a->done &&
		    ev->kind == a->kind && ev->obj == a->obj) {
			s->rng = a->rng;
			s->walks = a->walks;
			s->cur = a->lid;
			s->cur_made = s->look.t[a->lid].made;
			s->committed_spins = 0;
			s->next_ahead++;
		}
	}
	return xp_look_event(&s->look, ev);
}

static bool next_interesting(const struct xp_surw *s, uint32_t lid)
{
	const struct xp_rev *next = xp_look_next(&s->look, lid);
	return next && xp_surw_interesting(s, next->obj);
}

uint64_t xp_surw_weight(const struct xp_surw *s, uint32_t lid)
{
	uint32_t done = lid < s->look.n ? s->look.t[lid].done : 0;
	if (lid >= s->nrec || done >= xp_rec_count(s->look.rec, lid))
		return 0;
	return s->suf[lid][done];
}

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

static bool waited_for(const struct xp_view *v, uint64_t obj)
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

/* The locks a budget follows, as the tracer's model would hold them. */
#define SIM_LOCKS 64
#define SIM_THREADS 64
#define SIM_FREE UINT32_MAX
struct sim {
	struct { uint64_t obj; uint32_t owner, count; } l[SIM_LOCKS];
	size_t n;
};

static size_t sim_find(const struct sim *m, uint64_t obj)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->l[i].obj == obj)
			return i;
	return SIM_LOCKS;
}

/* obj's entry, added free if new; SIM_LOCKS when the table is full. */
static size_t sim_at(struct sim *m, uint64_t obj)
{
	size_t i = sim_find(m, obj);
	if (i < SIM_LOCKS || m->n == SIM_LOCKS)
		return i;
	m->l[m->n].obj = obj;
	m->l[m->n].owner = SIM_FREE;
	m->l[m->n].count = 0;
	return m->n++;
}

static bool sim_free(const struct sim *m, uint64_t obj)
{
	size_t i = sim_find(m, obj);
	return i == SIM_LOCKS || m->l[i].owner == SIM_FREE;
}

/* An acquire or a release by t: false when the model would not take it
 * so (the lock held by another, a release of what t does not hold). */
static bool sim_step(struct sim *m, uint32_t t, const struct xp_rev *r)
{
	size_t i = sim_at(m, r->obj);
	if (i == SIM_LOCKS)
		return false;
	if (r->kind == AVT_EV_ACQUIRE) {
		if (m->l[i].owner != SIM_FREE && m->l[i].owner != t)
			return false;
		m->l[i].owner = t;
		m->l[i].count++;
		return true;
	}
	if (m->l[i].owner != t)
		return false;
	if (--m->l[i].count == 0)
		m->l[i].owner = SIM_FREE;
	return true;
}

/* The budget's walk through the threads of a view (xp_surw_budget). */
struct walk {
	const struct xp_view *v;
	struct sim m;
	uint32_t pos[SIM_THREADS]; /* each thread's next recorded event */
	bool moved[SIM_THREADS];   /* its next is its recorded one (it ran, or it is the first) */
	uint32_t made[SIM_THREADS]; /* events it made in the walk */
};

/* Is view thread i offered at a pick where cur runs? */
static bool walk_offered(const struct xp_surw *s, const struct walk *w, size_t i, size_t cur)
{
	const struct xp_view_thread *t = &w->v->thr[i];
	if (i == cur)
		return true;
	if (w->moved[i]) {
		const struct xp_rev *r = xp_rec_event(s->look.rec, t->lid, w->pos[i]);
		return !r || r->kind != AVT_EV_ACQUIRE || sim_free(&w->m, r->obj);
	}
	return !t->lock || sim_free(&w->m, t->lock);
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
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
		      uint32_t *who, bool *extras, size_t max)
{
	s->nahead = s->next_ahead = 0;
	if (lid != s->cur || lid >= s->look.n || s->look.t[lid].parked)
		return 0;
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		return 0;
	size_t cur = SIZE_MAX;
	if (v && v->n > SIM_THREADS)
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
	bool known = v && who && v->locks_known && v->nlocks <= SIM_LOCKS;
	if (known) {
		for (size_t i = 0; i < v->nlocks; i++) {
			size_t j = sim_at(&w->m, v->locks[i].obj);
			w->m.l[j].owner = v->locks[i].owner;
			w->m.l[j].count = v->locks[i].count;
		}
	}
	/* the locks the others wait to take (and, without the held locks
	 * known, the running thread's holds on them) */
	for (size_t i = 0; v && i < v->n; i++) {
		size_t j = v->thr[i].lock ? sim_at(&w->m, v->thr[i].lock) : SIM_LOCKS;
		if (j < SIM_LOCKS && !known && v->thr[i].held) {
			w->m.l[j].owner = lid;
			w->m.l[j].count = v->thr[i].held;
		}
	}
	if (v)
		w->moved[cur] = true;
	/* the event it was picked for, if it has made none since */
	uint32_t cl = lid, p = s->look.t[lid].done, dec_lid = s->cur;
	uint32_t dec_pos = s->look.t[lid].made == s->cur_made ? p : UINT32_MAX;
	const struct xp_rev *first = xp_rec_event(s->look.rec, lid, p);
	if (first && first->kind == AVT_EV_START)
		p++;
	struct xp_surw *c = NULL;
	bool touched = false;
	uint32_t lids[SIM_THREADS];
	size_t k = 0;
	while (k < max) {
		const struct xp_rev *r = xp_rec_event(s->look.rec, cl, p);
		if (!r && who) {
			/* past its recording: its next is never interesting, so
			 * the current thread is picked again at every event
			 * (choose's first rule): any events, kind 0 (the
			 * picker cuts them where its spin count could end) */
			for (; k < max; k++) {
				ev[k] = (struct xp_rev){ 0, 0, AVT_EV_NONE, { 0 } };
				who[k] = cl;
				if (extras)
					extras[k] = false;
			}
			break;
		}
		if (!r)
			break;
		/* a lock held by another: the thread cannot go on (nor wait in
		 * the agent for a turn the walk would give it); the pick decides */
		if (known && r->kind == AVT_EV_ACQUIRE && !sim_free(&w->m, r->obj) &&
		    w->m.l[sim_find(&w->m, r->obj)].owner != cl)
			break;
		/* picked to make this very event: no draw (choose's first rule) */
		bool decided = cl == dec_lid && p == dec_pos;
		if (xp_surw_interesting(s, r->obj) && !decided) {
			if (!v || touched || s->nahead == SURW_AHEAD)
				break;
			if (!c && !(c = ahead_copy(s)))
				break;
			w->pos[cur] = p;
			for (size_t i = 0; i < v->n; i++) {
				uint32_t t = v->thr[i].lid;
				if (w->moved[i] && t < c->look.n) {
					c->look.t[t].done = w->pos[i];
					c->look.t[t].made = s->look.t[t].made + w->made[i];
					c->look.t[t].spins = 0;
					c->look.t[t].parked = false;
				}
			}
			size_t n = 0;
			for (size_t i = 0; i < v->n; i++)
				if (walk_offered(s, w, i, cur))
					lids[n++] = v->thr[i].lid;
			size_t pick = n ? xp_surw_pick(c, lids, n) : n;
			if (pick >= n)
				break;
			uint32_t win = lids[pick];
			if (win == cl) {
				s->ahead[s->nahead++] = (struct ahead){ cl, p, r->kind, r->obj, c->rng, c->walks };
				dec_lid = cl;
				dec_pos = p;
			} else {
				/* a hand-over to the winner, if it can wait its turn
				 * in the agent and this thread can wait for its own */
				size_t wi = 0;
				while (wi < v->n && v->thr[wi].lid != win)
					wi++;
				if (!known || !park_op(r) || wi == v->n || win >= s->look.n)
					break;
				const struct xp_rev *wr = xp_rec_event(s->look.rec, win, w->pos[wi]);
				if (!wr || !park_op(wr) ||
				    (!w->moved[wi] && (v->thr[wi].park != wr->kind || v->thr[wi].park_obj != wr->obj)))
					break;
				s->ahead[s->nahead++] =
					(struct ahead){ win, w->pos[wi], wr->kind, wr->obj, c->rng, c->walks };
				w->moved[wi] = true;
				cur = wi;
				cl = win;
				p = dec_pos = w->pos[wi];
				dec_lid = win;
				continue;
			}
		}
		if (lock_op(r) && (known || sim_find(&w->m, r->obj) < SIM_LOCKS)) {
			if (!sim_step(&w->m, cl, r)) {
				if (known)
					break; /* the model would not have it so */
				touched = true;
			}
		} else if (r->kind == AVT_EV_WAIT || sim_find(&w->m, r->obj) < SIM_LOCKS) {
			touched = true; /* a wait releases a mutex not in obj */
		}
		if (v && waited_for(v, r->obj))
			touched = true;
		ev[k] = *r;
		if (v)
			w->made[cur]++;
		if (who)
			who[k] = cl;
		/* an event the recording does not have, before this one: at its
		 * pick the thread goes on (choose's first rule) */
		if (extras)
			extras[k] = !xp_surw_interesting(s, r->obj);
		k++;
		p++;
	}
	ahead_free(c);
	free(w);
	return k;
}

static size_t choose(struct xp_surw *s, const uint32_t *lids, size_t n)
{
	size_t k = xp_look_candidates(&s->look, lids, n, s->idx), nsel = 0;
	uint64_t total = 0;

	/* the current thread goes on up to its next interesting event, and
	 * through it if it was picked to make it: a decision holds until the
	 * thread has made its event (a time slice may end before) */
	for (size_t i = 0; i < k; i++)
		if (lids[s->idx[i]] == s->cur &&
		    (!next_interesting(s, s->cur) || s->look.t[s->cur].made == s->cur_made))
			return s->idx[i];
	/* then every other thread, one at a time, at random */
	for (size_t i = 0; i < k; i++)
		if (!next_interesting(s, lids[s->idx[i]]))
			s->sel[nsel++] = s->idx[i];
	if (nsel)
		return s->sel[xp_rng_below(&s->rng, nsel)];
	/* all at an interesting event: the walk */
	for (size_t i = 0; i < k; i++) {
		uint64_t w = xp_surw_weight(s, lids[s->idx[i]]);
		total += w ? w : 1;
	}
	uint64_t x = xp_rng_below(&s->rng, total);
	s->walks++;
	for (size_t i = 0; i < k; i++) {
		uint64_t w = xp_surw_weight(s, lids[s->idx[i]]);
		w = w ? w : 1;
		if (x < w)
			return s->idx[i];
		x -= w;
	}
	BUG_ON(1);
	return 0;
}

size_t xp_surw_pick(struct xp_surw *s, const uint32_t *lids, size_t n)
{
	uint32_t max = 0;

	s->nahead = s->next_ahead = 0; /* a pick of its own: what was drawn ahead is not reached */

	BUG_ON(n == 0);
	for (size_t i = 0; i < n; i++)
		if (lids[i] > max)
			max = lids[i];
	if (xp_look_reg(&s->look, max) < 0)
		return n;
	if (s->idxcap < n) {
		size_t *ni = realloc(s->idx, n * sizeof *ni);
		if (ni)
			s->idx = ni;
		size_t *ns = ni ? realloc(s->sel, n * sizeof *ns) : NULL;
		if (!ni || !ns) {
			avt_error("explore: out of memory");
			return n;
		}
		s->sel = ns;
		s->idxcap = n;
	}
	size_t i = choose(s, lids, n);
	if (s->cur != lids[i] || s->cur_made != s->look.t[lids[i]].made)
		s->committed_spins = 0;
	s->cur = lids[i];
	s->cur_made = s->look.t[s->cur].made;
	return i;
}

/* A thread picked to make its next event, that has not made it yet, is
 * taken to compute on its way for up to this many times the usual slices
 * before it counts as spinning: a walk's decision is not undone by a
 * stretch of computation (on a loaded machine a time slice of 10 ms is
 * a small share of a CPU). */
#define SURW_COMMITTED_SLICES 10u

void xp_surw_yield(struct xp_surw *s, uint32_t lid)
{
	s->nahead = s->next_ahead = 0;
	if (lid == s->cur && lid < s->look.n && s->look.t[lid].made == s->cur_made &&
	    ++s->committed_spins % SURW_COMMITTED_SLICES)
		return;
	(void)xp_look_yield(&s->look, lid);
}

void xp_surw_describe(const struct xp_surw *s, char *buf, size_t len)
{
	size_t used = 0;

	if (len > 0)
		buf[0] = '\0';
	xp_put(buf, len, &used, "surw seed=%" PRIu64 " run=%" PRIu64 " walks=%" PRIu64, s->seed,
	       s->run_index, s->walks);
	if (s->all)
		xp_put(buf, len, &used, " objs all");
	else
		xp_put(buf, len, &used, " objs");
	for (size_t i = 0; i < s->nobjs; i++)
		xp_put(buf, len, &used, " %#" PRIx64, s->objs[i]);
	for (size_t i = 0; i < s->look.n; i++)
		if (s->look.t[i].parked)
			xp_put(buf, len, &used, " parked=T%zu", i);
}
