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

#define SURW_AHEAD 64

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
	uint32_t cur_done;     /* its events when it was picked */
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
	} ahead[SURW_AHEAD];
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
			s->cur_done = a->done;
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

/* The view's threads the pick offers with the running thread's holds on
 * the locks they wait for (held[i] for thr[i]'s lock) as they are. */
static size_t offered(const struct xp_view *v, const uint32_t *held, uint32_t *lids)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++)
		if (!v->thr[i].lock || !held[i])
			lids[n++] = v->thr[i].lid;
	return n;
}

/* An event of the running thread on a lock the view's threads wait for:
 * an acquire or a release moves the holds; anything else (a trylock that
 * failed, a read lock, a condition wait's release) is not followed. */
static bool follow_lock(const struct xp_view *v, uint32_t *held, const struct xp_rev *r)
{
	bool ok = r->kind != AVT_EV_WAIT; /* it releases a mutex not in obj */
	for (size_t i = 0; i < v->n; i++) {
		if (!v->thr[i].lock || v->thr[i].lock != r->obj)
			continue;
		if (r->kind == AVT_EV_ACQUIRE)
			held[i]++;
		else if (r->kind == AVT_EV_RELEASE && held[i])
			held[i]--;
		else
			ok = false;
	}
	return ok;
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
 * draws the same. */
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
		      size_t max)
{
	s->nahead = s->next_ahead = 0;
	if (lid != s->cur || lid >= s->look.n || s->look.t[lid].parked)
		return 0;
	size_t done = s->look.t[lid].done, k = 0;
	struct xp_surw *c = NULL;
	bool touched = false;
	uint32_t held[64], lids[64];
	if (v && v->n > 64)
		v = NULL;
	for (size_t i = 0; v && i < v->n; i++)
		held[i] = v->thr[i].held;
	for (size_t i = done; k < max; i++) {
		const struct xp_rev *r = xp_rec_event(s->look.rec, lid, i);
		if (r && i == done && r->kind == AVT_EV_START)
			continue;
		if (!r)
			break;
		/* picked to make this very event: no draw (choose's first rule) */
		bool decided = i == done && done == s->cur_done;
		if (xp_surw_interesting(s, r->obj) && !decided) {
			if (!v || touched || s->nahead == SURW_AHEAD || i > UINT32_MAX)
				break;
			if (!c && !(c = ahead_copy(s)))
				break;
			c->look.t[lid].done = (uint32_t)i;
			c->look.t[lid].spins = 0;
			c->look.t[lid].parked = false;
			size_t n = offered(v, held, lids);
			size_t pick = n ? xp_surw_pick(c, lids, n) : n;
			if (pick >= n || lids[pick] != lid)
				break;
			s->ahead[s->nahead++] = (struct ahead){ lid, (uint32_t)i, r->kind, r->obj, c->rng, c->walks };
		}
		if (v)
			touched |= waited_for(v, r->obj) || !follow_lock(v, held, r);
		ev[k++] = *r;
	}
	ahead_free(c);
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
		    (!next_interesting(s, s->cur) || s->look.t[s->cur].done == s->cur_done))
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
	if (s->cur != lids[i] || s->cur_done != s->look.t[lids[i]].done)
		s->committed_spins = 0;
	s->cur = lids[i];
	s->cur_done = s->look.t[s->cur].done;
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
	if (lid == s->cur && lid < s->look.n && s->look.t[lid].done == s->cur_done &&
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
