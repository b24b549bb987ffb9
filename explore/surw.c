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
 *
 * Process exit.  A thread at exit() or the return from main is about to
 * end every thread (xp_surw_exiting).  It never keeps running through it
 * as the current thread (the workers main did not join would never run).
 * When the run first comes to an exit it draws, once, either (7 runs in
 * 8) that the exit waits until no other thread can run (most failures of
 * unjoined workers need them to finish first), or (1 in 8) that it is an
 * interesting event whatever objects were drawn, of weight 1 (the exit is
 * one event): the walk weighs "the process ends now" against each
 * thread's remaining events as it weighs any two threads, so a failure
 * that needs the exit amid the workers (a destructor under a running
 * worker) stays reachable.  Either way the exit weighs no more than any
 * other thread.  The coin is drawn at the run's first exit, so a program
 * that joins every thread draws it after its last decision: its runs are
 * the same as before exits were weighed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "surw.h"
#include "trace/log.h"

bool xp_surw_interesting(const struct xp_surw *s, uint64_t obj)
{
	if (!obj)
		return false;
	if (s->all)
		return true;
	/* binary search: a linear scan of thousands of drawn objects at every
	 * event was most of a run of a 100k-event program (issue 30, shape 5) */
	size_t lo = 0, hi = s->nobjs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->sorted[mid] < obj)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nobjs && s->sorted[lo] == obj;
}

bool xp_surw_interesting_at(const struct xp_surw *s, uint32_t lid, uint32_t i)
{
	/* the suffix counts step down exactly at the interesting events */
	if (lid < s->nrec && i < xp_rec_count(s->look.rec, lid))
		return s->suf[lid][i] != s->suf[lid][i + 1];
	const struct xp_rev *r = xp_rec_event(s->look.rec, lid, i);
	return r && xp_surw_interesting(s, r->obj);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
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
	s->sorted = malloc(m * sizeof *s->sorted);
	if (!s->sorted) {
		avt_error("explore: out of memory");
		free(shared);
		return -1;
	}
	memcpy(s->sorted, shared, m * sizeof *s->sorted);
	qsort(s->sorted, m, sizeof *s->sorted, cmp_u64);
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
	s->exiting = UINT32_MAX;
	s->exit_waits = -1;
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
	free(s->sorted);
	free(s->idx);
	free(s->sel);
	free(s->ahead);
	free(s);
}

int xp_surw_event(struct xp_surw *s, const struct avt_event *ev)
{
	if (s->next_ahead < s->nahead) {
		/* the walk drawn ahead for this event: what its pick did */
		const struct xp_ahead *a = &s->ahead[s->next_ahead];
		if (ev->thread == a->lid && a->lid < s->look.n && s->look.t[a->lid].done == a->done &&
		    ev->kind == a->kind && ev->obj == a->obj) {
			s->rng = a->rng;
			s->walks = a->walks;
			s->cur = a->lid;
			s->cur_made = s->look.t[a->lid].made;
			s->committed_spins = 0;
			s->cur_spun = false;
			s->next_ahead++;
		}
	}
	if (ev->thread == s->exiting)
		s->exiting = UINT32_MAX; /* it went on (atexit handlers): no longer at the exit */
	return xp_look_event(&s->look, ev);
}

static bool next_interesting(const struct xp_surw *s, uint32_t lid)
{
	if (lid == s->exiting)
		return true;
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

/* lid's weight in the walk: a thread at its last interesting event (or
 * none known) still has that event; a process exit is one event. */
static uint64_t walk_weight(const struct xp_surw *s, uint32_t lid)
{
	uint64_t w = lid == s->exiting ? 1 : xp_surw_weight(s, lid);
	return w ? w : 1;
}

/* Leaves out of idx[0..k) the thread at an exit that waits, unless it
 * is the only one. */
static size_t exit_waits(const struct xp_surw *s, const uint32_t *lids, size_t *idx, size_t k)
{
	if (s->exiting == UINT32_MAX || s->exit_waits != 1 || k < 2)
		return k;
	for (size_t i = 0; i < k; i++)
		if (lids[idx[i]] == s->exiting) {
			idx[i] = idx[--k];
			break;
		}
	return k;
}

static size_t choose(struct xp_surw *s, const uint32_t *lids, size_t n)
{
	size_t k = xp_look_candidates(&s->look, lids, n, s->idx), nsel = 0;
	uint64_t total = 0;

	k = exit_waits(s, lids, s->idx, k);
	if (k == 1 && lids[s->idx[0]] == s->exiting)
		return s->idx[0]; /* the exit alone: no decision, no walk */

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
	for (size_t i = 0; i < k; i++)
		total += walk_weight(s, lids[s->idx[i]]);
	uint64_t x = xp_rng_below(&s->rng, total);
	s->walks++;
	for (size_t i = 0; i < k; i++) {
		uint64_t w = walk_weight(s, lids[s->idx[i]]);
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
	if (s->cur != lids[i] || s->cur_made != s->look.t[lids[i]].made) {
		s->committed_spins = 0;
		s->cur_spun = false;
	}
	s->cur = lids[i];
	s->cur_made = s->look.t[s->cur].made;
	return i;
}

/* A thread picked to make its next event, that has not made it yet, is
 * taken to compute on its way for up to this many times the usual slices
 * before it counts as spinning: a walk's decision is not undone by a
 * stretch of computation (on a loaded machine a time slice of 10 ms is
 * a small share of a CPU).  Not once it is seen to spin (its registers
 * the same at two slice ends, no event between: xp_surw_spun): it then
 * waits for another thread, and holding the decision only kept that
 * thread stopped for SURW_COMMITTED_SLICES x yield_limit slices, a whole
 * second of spinning for each spin-wait (GLib's thread-pool test spins
 * on `while (g_atomic_int_get (&n_jobs_started) == 0);` for its worker:
 * 4 such waits a run, and 30 of 100 runs ended at their time limit). */
#define SURW_COMMITTED_SLICES 10u

void xp_surw_yield(struct xp_surw *s, uint32_t lid)
{
	s->nahead = s->next_ahead = 0;
	if (lid == s->cur && lid < s->look.n && s->look.t[lid].made == s->cur_made && !s->cur_spun &&
	    ++s->committed_spins % SURW_COMMITTED_SLICES)
		return;
	(void)xp_look_yield(&s->look, lid);
}

void xp_surw_spun(struct xp_surw *s, uint32_t lid)
{
	if (lid == s->cur && lid < s->look.n && s->look.t[lid].made == s->cur_made)
		s->cur_spun = true;
}

/* One run in this many weighs the exit in the walk; the others make it
 * wait.  Waiting is what most failures of unjoined workers need (a
 * uniform walk puts one event last among n with odds 1/n): exit_three's
 * median runs to the bug over 10 seeds were 11 with 1 in 2, 9 with 1 in
 * 4, 7.5 with 1 in 8, 6.5 never (docs/explore.md). */
#define SURW_EXIT_CONTENDS 8

void xp_surw_exiting(struct xp_surw *s, uint32_t lid)
{
	s->nahead = s->next_ahead = 0;
	s->exiting = lid;
	if (s->exit_waits < 0)
		s->exit_waits = xp_rng_below(&s->rng, SURW_EXIT_CONTENDS) != 0;
	/* it was picked to go on to its next event, and came to the exit
	 * instead: that was no decision about the exit */
	if (s->cur == lid)
		s->cur = UINT32_MAX;
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

/* ---- the policy's verbs (xp.h) */

static void *surw_new_op(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	return xp_surw_new(c, seed, run_index);
}

static int surw_event_op(void *run, const struct avt_event *ev)
{
	return xp_surw_event(run, ev);
}

static size_t surw_pick_op(void *run, const uint32_t *lids, size_t n)
{
	return xp_surw_pick(run, lids, n);
}

static void surw_yield_op(void *run, uint32_t lid)
{
	xp_surw_yield(run, lid);
}

static void surw_spun_op(void *run, uint32_t lid)
{
	xp_surw_spun(run, lid);
}

static void surw_exiting_op(void *run, uint32_t lid)
{
	xp_surw_exiting(run, lid);
}

static void surw_describe_op(const void *run, char *buf, size_t len)
{
	xp_surw_describe(run, buf, len);
}

static void surw_free_op(void *run)
{
	xp_surw_free(run);
}

const struct xp_policy_ops xp_surw_ops = {
	.new = surw_new_op,
	.event = surw_event_op,
	.pick = surw_pick_op,
	.yield = surw_yield_op,
	.exiting = surw_exiting_op,
	.spun = surw_spun_op,
	.describe = surw_describe_op,
	.target = NULL,
	.free = surw_free_op,
};
