/*
 * explore's look-ahead policies on hand-built recordings, driven by a
 * small simulator (every thread can always run; a picked thread makes its
 * next recorded event): SURW's uniformity over the interleavings of two
 * threads (chi-square, fixed seeds) and its selectivity, POS's races and
 * coin, the reads-from keys, a guided run reaching the new pair it
 * targets, prediction starting points, the recording view's resync.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/policy_int.h"
#include "trace/event.h"
#include "unit_util.h"

#define X 0x601040u
#define Y 0x601080u
#define P1 0x602000u /* private to T1 */
#define P2 0x602040u /* private to T2 */

/* A recording: per thread, a list of (kind, obj, site). */
struct spec {
	uint32_t thread;
	unsigned kind;
	uint64_t obj, site;
};

static struct avt_event mk(uint32_t thread, uint32_t tindex, unsigned kind, uint64_t obj,
			   uint64_t site)
{
	struct avt_event e;

	memset(&e, 0, sizeof e);
	e.thread = thread;
	e.tindex = tindex;
	e.kind = (uint16_t)kind;
	e.obj = obj;
	e.site_mod = 0;
	e.site_off = site;
	return e;
}

/* Events of spec in the given order (a recording). */
static struct avt_event *events(const struct spec *s, size_t n)
{
	struct avt_event *ev = calloc(n, sizeof *ev);
	uint32_t idx[8] = { 0 };

	ck_assert_ptr_nonnull(ev);
	for (size_t i = 0; i < n; i++)
		ev[i] = mk(s[i].thread, idx[s[i].thread]++, s[i].kind, s[i].obj, s[i].site);
	return ev;
}

/* Runs a policy over the recording rec until every thread has made its
 * recorded events; the threads in the order they ran into seq (room for
 * the total), the events into out (if not NULL).  Returns the number. */
static size_t simulate(struct xp_policy *p, const struct xp_rec *rec, uint32_t *seq,
		       struct avt_event *out)
{
	uint32_t nt = xp_rec_nthreads(rec), done[8] = { 0 }, lids[8];
	size_t k = 0;

	for (;;) {
		size_t n = 0;
		for (uint32_t t = 0; t < nt; t++)
			if (done[t] < xp_rec_count(rec, t))
				lids[n++] = t;
		if (n == 0)
			return k;
		size_t i = xp_policy_pick(p, lids, n);
		ck_assert_uint_lt(i, n);
		uint32_t t = lids[i];
		const struct xp_rev *r = xp_rec_event(rec, t, done[t]);
		struct avt_event e = mk(t, done[t]++, r->kind, r->obj, r->site & 0xffffffffffffull);
		ck_assert_int_eq(xp_policy_event(p, &e), 0);
		if (out)
			out[k] = e;
		seq[k++] = t;
	}
}

static struct xp_config config(enum xp_algo algo, const struct xp_rec *rec, unsigned nvars)
{
	struct xp_config c;

	memset(&c, 0, sizeof c);
	c.algo = algo;
	c.depth = 3;
	c.nvars = nvars;
	c.nthreads_est = xp_rec_nthreads(rec);
	c.rec = rec;
	return c;
}

/* ---- SURW */

/* Two threads with n and m events on X: which C(n+m, n) interleaving a
 * run makes, as the bit mask of T1's positions, ranked among all masks
 * with n bits. */
static unsigned popcount(unsigned x)
{
	return (unsigned)__builtin_popcount(x);
}

static double chi_square(const unsigned *obs, size_t k, double expect)
{
	double c = 0;
	for (size_t i = 0; i < k; i++)
		c += (obs[i] - expect) * (obs[i] - expect) / expect;
	return c;
}

/* Counts per interleaving over runs of SURW (or, with naive, of a fair
 * coin at every step), into counts (indexed by rank); returns how many
 * interleavings there are. */
static size_t interleavings(unsigned n, unsigned m, unsigned runs, bool naive, unsigned *counts)
{
	struct spec s[16];
	size_t ns = 0, nmask = 0;
	unsigned rank[1 << 12];

	for (unsigned i = 0; i < n; i++)
		s[ns++] = (struct spec){ 0, AVT_EV_WRITE, X, 0x100 + i };
	for (unsigned i = 0; i < m; i++)
		s[ns++] = (struct spec){ 1, AVT_EV_WRITE, X, 0x200 + i };
	struct avt_event *ev = events(s, ns);
	struct xp_rec *rec = xp_rec_new(ev, ns);
	ck_assert_ptr_nonnull(rec);
	for (unsigned mask = 0; mask < (1u << (n + m)); mask++)
		if (popcount(mask) == n)
			rank[mask] = (unsigned)nmask++;
	memset(counts, 0, nmask * sizeof *counts);
	struct xp_config c = config(XP_SURW, rec, 1);
	struct xp_rng coin;
	xp_rng_seed(&coin, 99);
	for (unsigned r = 0; r < runs; r++) {
		uint32_t seq[16];
		unsigned mask = 0, left[2] = { n, m };
		if (naive) {
			for (unsigned k = 0; k < n + m; k++) {
				unsigned t = !left[0] ? 1 : !left[1] ? 0 : (unsigned)xp_rng_below(&coin, 2);
				left[t]--;
				seq[k] = t;
			}
		} else {
			struct xp_policy *p = xp_policy_new(&c, 7, r);
			ck_assert_ptr_nonnull(p);
			ck_assert_uint_eq(simulate(p, rec, seq, NULL), n + m);
			xp_policy_free(p);
		}
		for (unsigned k = 0; k < n + m; k++)
			if (seq[k] == 0)
				mask |= 1u << k;
		counts[rank[mask]]++;
	}
	xp_rec_free(rec);
	free(ev);
	return nmask;
}

/* 3 + 2 events: 10 interleavings, 9 degrees of freedom; 27.88 is the
 * chi-square quantile for p = 0.001.  4 + 3: 35, 34 degrees, 65.25. */
START_TEST(test_surw_uniform_two_threads)
{
	unsigned counts[64];
	size_t k = interleavings(3, 2, 10000, false, counts);

	ck_assert_uint_eq(k, 10);
	ck_assert_double_lt(chi_square(counts, k, 1000.0), 27.88);
	k = interleavings(4, 3, 17500, false, counts);
	ck_assert_uint_eq(k, 35);
	ck_assert_double_lt(chi_square(counts, k, 500.0), 65.25);
}
END_TEST

/* The check has the power to fail: a fair coin per step is far from
 * uniform over interleavings (it favours alternation early). */
START_TEST(test_surw_naive_walk_fails_the_check)
{
	unsigned counts[64];
	size_t k = interleavings(4, 3, 17500, true, counts);

	ck_assert_double_gt(chi_square(counts, k, 500.0), 65.25 * 4);
}
END_TEST

/* Only events on the shared object X are interesting (P1, P2 are each
 * one thread's).  The projection on X of T1 (2 events) and T2 (1) is
 * uniform over its 3 orders, and no thread is ever switched away from
 * while its next event is not interesting. */
START_TEST(test_surw_selective)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, P1, 2 }, { 0, AVT_EV_WRITE, P1, 3 },
		{ 0, AVT_EV_WRITE, X, 4 }, { 1, AVT_EV_WRITE, P2, 5 }, { 1, AVT_EV_WRITE, X, 6 },
		{ 1, AVT_EV_WRITE, P2, 7 },
	};
	struct avt_event *ev = events(s, 7), out[7];
	struct xp_rec *rec = xp_rec_new(ev, 7);
	struct xp_config c = config(XP_SURW, rec, 1);
	unsigned orders[3] = { 0 };

	for (unsigned r = 0; r < 3000; r++) {
		struct xp_surw *sw = xp_surw_new(&c, 3, r);
		uint32_t nt = 2, done[2] = { 0 }, lids[2], prev = UINT32_MAX;
		unsigned xs = 0, code = 0;

		ck_assert(xp_surw_interesting(sw, X));
		ck_assert(!xp_surw_interesting(sw, P1));
		ck_assert_uint_eq(xp_surw_weight(sw, 0), 2);
		ck_assert_uint_eq(xp_surw_weight(sw, 1), 1);
		for (size_t k = 0; k < 7; k++) {
			size_t n = 0;
			for (uint32_t t = 0; t < nt; t++)
				if (done[t] < xp_rec_count(rec, t))
					lids[n++] = t;
			uint32_t t = lids[xp_surw_pick(sw, lids, n)];
			const struct xp_rev *prev_next =
				prev == UINT32_MAX ? NULL : xp_rec_event(rec, prev, done[prev]);
			if (prev_next && prev_next->obj != X)
				ck_assert_uint_eq(t, prev); /* kept while not interesting */
			const struct xp_rev *e = xp_rec_event(rec, t, done[t]);
			out[k] = mk(t, done[t]++, e->kind, e->obj, e->site & 0xffff);
			ck_assert_int_eq(xp_surw_event(sw, &out[k]), 0);
			if (e->obj == X)
				code |= t << xs++;
			prev = t;
		}
		ck_assert_uint_eq(xs, 3);
		/* T2's single X event is first (code 1), second (2) or third (4) */
		orders[code == 1 ? 0 : code == 2 ? 1 : 2]++;
		xp_surw_free(sw);
	}
	ck_assert_double_lt(chi_square(orders, 3, 1000.0), 13.82); /* df 2, p 0.001 */
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* Many shared objects (a sort's array elements): whatever number a run
 * draws, an object is interesting exactly when it is among those drawn
 * (the sorted copy searched gives the draw's answer), and so is each
 * recorded event read off the suffix counts (xp_surw_interesting_at). */
START_TEST(test_surw_many_objects)
{
	enum { NOBJ = 700, NEV = 2 * NOBJ + 2 };
	struct spec s[NEV];
	size_t ns = 0;

	for (unsigned t = 0; t < 2; t++) {
		for (unsigned j = 0; j < NOBJ; j++) /* both threads, in another order each */
			s[ns++] = (struct spec){ t, AVT_EV_WRITE, 0x700000u + 8u * ((j * (t ? 337u : 1u)) % NOBJ),
						 0x100 + j };
		s[ns++] = (struct spec){ t, AVT_EV_WRITE, t ? P2 : P1, 0x50 };
	}
	struct avt_event *ev = events(s, ns);
	struct xp_rec *rec = xp_rec_new(ev, ns);
	ck_assert_ptr_nonnull(rec);
	struct xp_config c = config(XP_SURW, rec, XP_VARS_RANDOM);
	unsigned drawn_many = 0;
	for (unsigned r = 0; r < 40; r++) {
		struct xp_surw *sw = xp_surw_new(&c, 5, r);
		ck_assert_ptr_nonnull(sw);
		drawn_many += sw->nobjs > NOBJ / 2;
		for (unsigned j = 0; j <= NOBJ; j++) {
			uint64_t o = 0x700000u + 8u * j; /* j == NOBJ: not in the recording */
			bool in = sw->all && j < NOBJ;
			for (size_t i = 0; i < sw->nobjs; i++)
				in |= sw->objs[i] == o;
			ck_assert_int_eq(xp_surw_interesting(sw, o), in || (sw->all && j == NOBJ));
		}
		ck_assert_int_eq(xp_surw_interesting(sw, P1), sw->all);
		for (uint32_t t = 0; t < 2; t++)
			for (uint32_t i = 0; i <= xp_rec_count(rec, t); i++) {
				const struct xp_rev *e = xp_rec_event(rec, t, i);
				ck_assert_int_eq(xp_surw_interesting_at(sw, t, i), e && xp_surw_interesting(sw, e->obj));
			}
		xp_surw_free(sw);
	}
	ck_assert_uint_gt(drawn_many, 0);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* The budget (xp_policy_budget) with no view: the events the current
 * thread would be picked for again with no draw are its next recorded
 * ones up to an interesting one (the one it was picked for included);
 * every pick over them does give it them, and a thread not picked, or at
 * an interesting event, gets none. */
START_TEST(test_surw_budget)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, P1, 2 }, { 0, AVT_EV_READ, P1, 3 },
		{ 0, AVT_EV_WRITE, X, 4 }, { 1, AVT_EV_WRITE, P2, 5 }, { 1, AVT_EV_WRITE, X, 6 },
		{ 1, AVT_EV_WRITE, P2, 7 },
	};
	struct avt_event *ev = events(s, 7);
	struct xp_rec *rec = xp_rec_new(ev, 7);
	struct xp_config c = config(XP_SURW, rec, 1);
	struct xp_rev got[8];
	uint32_t both[2] = { 0, 1 }, t0[1] = { 0 }, t1[1] = { 1 };

	for (unsigned r = 0; r < 50; r++) {
		struct xp_policy *p = xp_policy_new(&c, 5, r);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(xp_policy_pick(p, t0, 1), 0);
		ck_assert_uint_eq(xp_policy_budget(p, 0, NULL, got, NULL, NULL, 8), 3); /* picked for X: it, P1 twice, up to X */
		ck_assert_int_eq(xp_policy_event(p, &ev[0]), 0);
		ck_assert_uint_eq(xp_policy_budget(p, 1, NULL, got, NULL, NULL, 8), 0); /* not the one picked */
		ck_assert_uint_eq(xp_policy_budget(p, 0, NULL, got, NULL, NULL, 1), 1);  /* at most max */
		ck_assert_uint_eq(xp_policy_budget(p, 0, NULL, got, NULL, NULL, 8), 2);
		ck_assert(got[0].obj == P1 && got[0].kind == AVT_EV_WRITE);
		ck_assert(got[1].obj == P1 && got[1].kind == AVT_EV_READ);
		/* and each pick over them gives T0 them, whatever the draw */
		for (int k = 1; k <= 2; k++) {
			ck_assert_uint_eq(xp_policy_pick(p, both, 2), 0);
			ck_assert_int_eq(xp_policy_event(p, &ev[k]), 0);
		}
		ck_assert_uint_eq(xp_policy_budget(p, 0, NULL, got, NULL, NULL, 8), 0); /* X again */
		/* T1 runs to its end: past its recording nothing is expected */
		ck_assert_uint_eq(xp_policy_pick(p, t1, 1), 0);
		ck_assert_int_eq(xp_policy_event(p, &ev[4]), 0);
		ck_assert_uint_eq(xp_policy_budget(p, 1, NULL, got, NULL, NULL, 8), 0);
		ck_assert_uint_eq(xp_policy_pick(p, t1, 1), 0);
		ck_assert_int_eq(xp_policy_event(p, &ev[5]), 0);
		ck_assert_uint_eq(xp_policy_budget(p, 1, NULL, got, NULL, NULL, 8), 1);
		ck_assert(got[0].obj == P2);
		ck_assert_int_eq(xp_policy_event(p, &ev[6]), 0);
		ck_assert_uint_eq(xp_policy_budget(p, 1, NULL, got, NULL, NULL, 8), 0);
		xp_policy_free(p);
	}
	/* the other policies decide at every event */
	struct xp_config pc = config(XP_POS, rec, 1);
	struct xp_policy *p = xp_policy_new(&pc, 5, 1);
	ck_assert_uint_eq(xp_policy_pick(p, t0, 1), 0);
	ck_assert_int_eq(xp_policy_event(p, &ev[0]), 0);
	ck_assert_uint_eq(xp_policy_budget(p, 0, NULL, got, NULL, NULL, 8), 0);
	xp_policy_free(p);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* Weights follow the run: after T1's first X event its weight drops. */
START_TEST(test_surw_weights_follow_the_run)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_READ, X, 2 }, { 0, AVT_EV_WRITE, X, 3 },
		{ 1, AVT_EV_READ, X, 4 },
	};
	struct avt_event *ev = events(s, 4);
	struct xp_rec *rec = xp_rec_new(ev, 4);
	struct xp_config c = config(XP_SURW, rec, 1);
	struct xp_surw *sw = xp_surw_new(&c, 1, 1);

	ck_assert_uint_eq(xp_surw_weight(sw, 0), 3);
	ck_assert_int_eq(xp_surw_event(sw, &ev[0]), 0);
	ck_assert_uint_eq(xp_surw_weight(sw, 0), 2);
	ck_assert_uint_eq(xp_surw_weight(sw, 1), 1);
	ck_assert_uint_eq(xp_surw_weight(sw, 5), 0); /* unknown thread */
	xp_surw_free(sw);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* ---- POS */

START_TEST(test_pos_reassigns_racing_events)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, Y, 2 },
		{ 1, AVT_EV_READ, X, 3 },
		{ 2, AVT_EV_READ, Y, 4 },
		{ 3, AVT_EV_READ, X, 5 },
	};
	struct avt_event *ev = events(s, 5);
	struct xp_rec *rec = xp_rec_new(ev, 5);
	struct xp_config c = config(XP_POS, rec, 0);
	struct xp_pos *p = xp_pos_new(&c, 5, 1);
	uint64_t before[4];

	for (uint32_t t = 0; t < 4; t++)
		before[t] = xp_pos_priority(p, t);
	/* T1's write of X races with T2's and T4's pending reads of X */
	ck_assert_int_eq(xp_pos_event(p, &ev[0]), 0);
	ck_assert_uint_ne(xp_pos_priority(p, 0), before[0]); /* its next event */
	ck_assert_uint_eq(xp_pos_reassigned(p, 1), 1);
	ck_assert_uint_ne(xp_pos_priority(p, 1), before[1]);
	ck_assert_uint_eq(xp_pos_reassigned(p, 2), 0);
	ck_assert_uint_eq(xp_pos_priority(p, 2), before[2]); /* Y: commutes */
	ck_assert_uint_eq(xp_pos_reassigned(p, 3), 1);
	/* a read of X does not race with a read of X */
	before[3] = xp_pos_priority(p, 3);
	ck_assert_int_eq(xp_pos_event(p, &ev[2]), 0);
	ck_assert_uint_eq(xp_pos_reassigned(p, 3), 1);
	ck_assert_uint_eq(xp_pos_priority(p, 3), before[3]);
	/* the highest priority runs */
	uint32_t lids[] = { 2, 3 };
	size_t i = xp_pos_pick(p, lids, 2);
	ck_assert_uint_ge(xp_pos_priority(p, lids[i]), xp_pos_priority(p, lids[1 - i]));
	xp_pos_free(p);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* The old POS: a scan of every known thread at every event (pos.c before
 * its index), as the reference the index must draw exactly as. */
struct pos_ref {
	struct xp_look look;
	struct xp_rng rng;
	uint64_t prio[64];
	uint32_t n;
};

static void ref_reg(struct pos_ref *r, uint32_t lid)
{
	if (xp_look_reg(&r->look, lid) < 0)
		ck_abort_msg("xp_look_reg failed");
	while (r->n <= lid)
		r->prio[r->n++] = xp_rng_next(&r->rng) | 1;
}

static void ref_event(struct pos_ref *r, const struct avt_event *ev)
{
	ref_reg(r, ev->thread);
	if (xp_look_event(&r->look, ev) < 0)
		ck_abort_msg("xp_look_event failed");
	r->prio[ev->thread] = xp_rng_next(&r->rng) | 1;
	if (!xp_event_obj(ev->kind, ev->obj))
		return;
	for (uint32_t u = 0; u < r->n; u++) {
		const struct xp_rev *next;
		if (u == ev->thread || !(next = xp_look_next(&r->look, u)))
			continue;
		if (xp_conflict(ev->kind, ev->obj, next->kind, next->obj))
			r->prio[u] = xp_rng_next(&r->rng) | 1;
	}
}

/* POS's index of pending events by object draws what a scan of every
 * thread drew, event by event, on runs that go the recording's way and
 * runs that do not (events out of order, events the recording does not
 * have, threads past their recording); and an event visits only the
 * threads pending on its object, not every thread (issues 29, 30). */
START_TEST(test_pos_index_draws_as_the_scan)
{
	enum { T = 40, PER = 12, N = T * PER };
	static const unsigned kinds[] = { AVT_EV_READ, AVT_EV_WRITE, AVT_EV_ACQUIRE, AVT_EV_RELEASE };
	static const uint64_t objs[] = { X, Y, X + 8, Y + 8, 0x602000u };
	struct xp_rng g;
	xp_rng_seed(&g, 77);
	for (int round = 0; round < 10; round++) {
		struct avt_event *ev = calloc(N, sizeof *ev);
		ck_assert_ptr_nonnull(ev);
		uint32_t idx[T] = { 0 };
		for (size_t i = 0; i < N; i++) {
			uint32_t t = (uint32_t)(i % T);
			uint64_t o = objs[xp_rng_below(&g, 5)];
			ev[i] = mk(t, idx[t]++, kinds[xp_rng_below(&g, 4)], o, 100 + xp_rng_below(&g, 6));
		}
		struct xp_rec *rec = xp_rec_new(ev, N);
		struct xp_config c = config(XP_POS, rec, 0);
		c.nthreads_est = 1 + (uint32_t)xp_rng_below(&g, T); /* the rest known later */
		struct xp_pos *p = xp_pos_new(&c, 9, (uint64_t)round);
		struct pos_ref r;
		memset(&r, 0, sizeof r);
		xp_look_init(&r.look, rec, 0);
		xp_rng_seed_run(&r.rng, 9, (uint64_t)round);
		ref_reg(&r, c.nthreads_est - 1);
		/* a run: recorded events in a random order, now and then one
		 * the recording does not have, or a thread's events again */
		for (int k = 0; k < 2 * N; k++) {
			struct avt_event e = ev[xp_rng_below(&g, N)];
			if (xp_rng_below(&g, 8) == 0)
				e.obj = objs[xp_rng_below(&g, 5)];
			if (xp_pos_event(p, &e) < 0)
				ck_abort_msg("xp_pos_event failed");
			ref_event(&r, &e);
			uint32_t bad = 0;
			for (uint32_t u = 0; u < r.n; u++)
				bad += xp_pos_priority(p, u) != r.prio[u];
			if (bad) /* (one check an event: Check's asserts are slow) */
				ck_abort_msg("round %d, event %d: %u priorities differ", round, k, bad);
		}
		xp_look_release(&r.look);
		xp_pos_free(p);
		xp_rec_free(rec);
		free(ev);
	}
	/* 40 threads each about to write its own object, one event of T0's
	 * on its own: it races with nobody, and visits nobody */
	struct avt_event own[T];
	for (uint32_t t = 0; t < T; t++)
		own[t] = mk(t, 0, AVT_EV_WRITE, 0x700000u + 64u * t, 1);
	struct xp_rec *rec = xp_rec_new(own, T);
	struct xp_config c = config(XP_POS, rec, 0);
	struct xp_pos *p = xp_pos_new(&c, 1, 1);
	ck_assert_int_eq(xp_pos_event(p, &own[0]), 0);
	ck_assert_uint_eq(xp_pos_visits(p), 0);
	xp_pos_free(p);
	xp_rec_free(rec);
}
END_TEST

/* Two racing writes: either order about half the time over many runs. */
START_TEST(test_pos_race_is_a_coin)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 1, AVT_EV_WRITE, X, 2 },
	};
	struct avt_event *ev = events(s, 2);
	struct xp_rec *rec = xp_rec_new(ev, 2);
	struct xp_config c = config(XP_POS, rec, 0);
	unsigned first0 = 0;

	for (unsigned r = 0; r < 4000; r++) {
		struct xp_policy *p = xp_policy_new(&c, 11, r);
		uint32_t seq[2];
		ck_assert_uint_eq(simulate(p, rec, seq, NULL), 2);
		first0 += seq[0] == 0;
		xp_policy_free(p);
	}
	ck_assert_uint_gt(first0, 1800);
	ck_assert_uint_lt(first0, 2200);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* ---- portfolio */

/* Run r of a portfolio is its member's own run: runs cycle through surw,
 * pos, surw, pct, so run r of surw is its ((r-1)/4*2 + 1 or 2)-th:
 * the same order of threads as that member alone with the same seed
 * makes in its own run, and the members differ (a 6-event recording
 * with T1 and T2 racing on X: none of them picks alike every run). */
START_TEST(test_portfolio_runs_are_its_members_runs)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_READ, X, 2 }, { 0, AVT_EV_WRITE, X, 3 },
		{ 1, AVT_EV_WRITE, X, 4 }, { 1, AVT_EV_READ, X, 5 }, { 1, AVT_EV_WRITE, X, 6 },
	};
	static const enum xp_algo members[] = { XP_SURW, XP_POS, XP_SURW, XP_PCT };
	/* the member's run number by slot in the cycle of 4 */
	static const unsigned per[] = { 2, 1, 2, 1 }, before[] = { 0, 0, 1, 0 };
	struct avt_event *ev = events(s, 6);
	struct xp_rec *rec = xp_rec_new(ev, 6);
	struct xp_config pc = config(XP_PORTFOLIO, rec, 0);
	unsigned differs = 0;

	for (uint64_t r = 1; r <= 60; r++) {
		struct xp_config m;
		uint64_t mr;
		xp_portfolio_member(&pc, r, &m, &mr);
		unsigned slot = (unsigned)((r - 1) % 4);
		ck_assert_int_eq(m.algo, members[slot]);
		ck_assert_uint_eq(mr, (r - 1) / 4 * per[slot] + before[slot] + 1);
		ck_assert_uint_eq(m.nvars, m.algo == XP_SURW ? XP_VARS_RANDOM : 0);
		struct xp_policy *p = xp_policy_new(&pc, 9, r), *q = xp_policy_new(&m, 9, mr);
		struct xp_config other = m;
		other.algo = m.algo == XP_POS ? XP_PCT : XP_POS;
		other.nvars = other.algo == XP_SURW ? XP_VARS_RANDOM : 0;
		struct xp_policy *o = xp_policy_new(&other, 9, mr);
		uint32_t a[6], b[6], c[6];
		ck_assert_uint_eq(simulate(p, rec, a, NULL), 6);
		ck_assert_uint_eq(simulate(q, rec, b, NULL), 6);
		ck_assert_uint_eq(simulate(o, rec, c, NULL), 6);
		ck_assert_mem_eq(a, b, sizeof a);
		differs += memcmp(a, c, sizeof a) != 0;
		xp_policy_free(p);
		xp_policy_free(q);
		xp_policy_free(o);
	}
	ck_assert_uint_gt(differs, 5); /* the member's run, not any policy's */
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* A policy that is not a portfolio is its own member, run for run. */
START_TEST(test_portfolio_member_of_a_single_policy)
{
	struct xp_config c, m;
	uint64_t mr;

	memset(&c, 0, sizeof c);
	c.algo = XP_POS;
	c.nvars = 4;
	xp_portfolio_member(&c, 17, &m, &mr);
	ck_assert_int_eq(m.algo, XP_POS);
	ck_assert_uint_eq(m.nvars, 4);
	ck_assert_uint_eq(mr, 17);
	ck_assert_str_eq(xp_algo_name(XP_PORTFOLIO), "portfolio");
}
END_TEST

/* ---- reads-from */

START_TEST(test_rf_keys)
{
	/* T1 reads X (initial), writes X; T2 reads X (T1's write) */
	static const struct spec s[] = {
		{ 0, AVT_EV_READ, X, 1 }, { 0, AVT_EV_WRITE, X, 2 }, { 1, AVT_EV_READ, X, 3 },
	};
	static const struct spec s2[] = {
		{ 1, AVT_EV_READ, X, 3 }, { 0, AVT_EV_READ, X, 1 }, { 0, AVT_EV_WRITE, X, 2 },
	};
	struct avt_event *a = events(s, 3), *b = events(s2, 3);
	uint64_t *ka, *kb;
	size_t na, nb;

	ck_assert_int_eq(xp_rf_keys(a, 3, &ka, &na), 0);
	ck_assert_int_eq(xp_rf_keys(b, 3, &kb, &nb), 0);
	ck_assert_uint_eq(na, 2);
	ck_assert_uint_eq(nb, 2);
	/* T1's read from the initial value is in both; T2's differs */
	size_t common = 0;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			common += ka[i] == kb[j];
	ck_assert_uint_eq(common, 1);
	free(ka);
	free(kb);
	free(a);
	free(b);
}
END_TEST

/* A lost-update shape: the recording shows T1's read of X from the
 * initial value and T2's from T1's write.  Every guided run draws a pair
 * the recording has not shown, and reaches it: its run's reads-from keys
 * hold the target, which the recording's did not. */
START_TEST(test_guided_reaches_new_pair)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_READ, X, 1 }, { 0, AVT_EV_WRITE, X, 2 },
		{ 1, AVT_EV_READ, X, 3 }, { 1, AVT_EV_WRITE, X, 4 },
	};
	struct avt_event *ev = events(s, 4), out[4];
	struct xp_rec *rec = xp_rec_new(ev, 4);
	struct xp_guide *g = xp_guide_new(rec);
	uint64_t *keys;
	size_t nkeys;
	unsigned targeted = 0, lost_update = 0;

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(xp_rf_keys(ev, 4, &keys, &nkeys), 0);
	ck_assert_int_eq(xp_guide_add_rf(g, keys, nkeys), (long)nkeys);
	ck_assert_int_eq(xp_guide_add_rf(g, keys, nkeys), 0);
	free(keys);
	struct xp_config c = config(XP_GUIDED, rec, 0);
	c.guide = g;
	for (unsigned r = 1; r <= 40; r++) {
		struct xp_policy *p = xp_policy_new(&c, 3, r);
		uint32_t seq[4];
		uint64_t target = xp_policy_target(p);
		ck_assert_uint_eq(simulate(p, rec, seq, out), 4);
		xp_policy_free(p);
		if (!target)
			continue;
		targeted++;
		ck_assert(!xp_guide_seen(g, target));
		ck_assert_int_eq(xp_rf_keys(out, 4, &keys, &nkeys), 0);
		bool reached = false;
		for (size_t i = 0; i < nkeys; i++)
			reached |= keys[i] == target;
		ck_assert_msg(reached, "run %u did not reach its target", r);
		free(keys);
		/* both reads before both writes */
		lost_update += out[0].kind == AVT_EV_READ && out[1].kind == AVT_EV_READ;
	}
	ck_assert_uint_ge(targeted, 20);
	ck_assert_uint_ge(lost_update, 1);
	xp_guide_free(g);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* A prediction's run steps: run 1 follows them, run 2 (no start) does
 * not have to; a start that cannot be followed ends where it fails. */
START_TEST(test_prediction_start_is_followed)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, X, 2 },
		{ 1, AVT_EV_WRITE, X, 3 }, { 1, AVT_EV_WRITE, X, 4 },
	};
	static const uint32_t start[] = { 1, 0, 1, 0 };
	static const uint32_t bad[] = { 1, 1, 1, 0 };
	struct avt_event *ev = events(s, 4);
	struct xp_rec *rec = xp_rec_new(ev, 4);
	struct xp_guide *g = xp_guide_new(rec);
	char line[256];

	ck_assert_int_eq(xp_guide_add_start(g, start, 4, true), 0);
	ck_assert_int_eq(xp_guide_add_start(g, bad, 4, true), 0);
	ck_assert_uint_eq(xp_guide_npredicted(g), 2);
	for (int algo = XP_PCT; algo <= XP_GUIDED; algo++) {
		struct xp_config c = config((enum xp_algo)algo, rec, 1);
		uint32_t seq[4];
		c.guide = g;
		c.k_est = 4;
		struct xp_policy *p = xp_policy_new(&c, 1, 1);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(simulate(p, rec, seq, NULL), 4);
		ck_assert_mem_eq(seq, start, sizeof start);
		xp_policy_describe(p, line, sizeof line);
		ck_assert_msg(strstr(line, "from prediction start 1 (4/4 events)"), "%s", line);
		xp_policy_free(p);
		p = xp_policy_new(&c, 1, 2);
		ck_assert_uint_eq(simulate(p, rec, seq, NULL), 4);
		ck_assert_uint_eq(seq[0], 1);
		xp_policy_describe(p, line, sizeof line);
		ck_assert_msg(strstr(line, "from prediction start 2 (2/4 events)"), "%s", line);
		xp_policy_free(p);
	}
	xp_guide_free(g);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* A prediction whose pattern names T0 and T1: their order in the
 * prefix holds in every run, and the bystander T2 is placed uniformly
 * among them (a uniform interleaving of the pattern's 4 events with T2's
 * 2: 15 placements, 14 degrees of freedom, 36.12 the chi-square quantile
 * for p = 0.001). */
START_TEST(test_prediction_bystanders_at_random)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, X, 2 },
		{ 1, AVT_EV_WRITE, X, 3 }, { 1, AVT_EV_WRITE, X, 4 },
		{ 2, AVT_EV_WRITE, X, 5 }, { 2, AVT_EV_WRITE, X, 6 },
	};
	/* the schedule has the bystander last, as the recording did */
	static const uint32_t start[] = { 1, 0, 1, 0, 2, 2 };
	static const uint32_t pattern[] = { 0, 1 };
	struct avt_event *ev = events(s, 6);
	struct xp_rec *rec = xp_rec_new(ev, 6);
	struct xp_guide *g = xp_guide_new(rec);
	unsigned counts[64] = { 0 }, rank[64], nmask = 0, runs = 6000;
	char line[256];

	ck_assert_int_eq(xp_guide_add_prediction(g, start, 6, true, pattern, 2), 0);
	for (unsigned mask = 0; mask < 64; mask++)
		if (popcount(mask) == 2)
			rank[mask] = nmask++;
	ck_assert_uint_eq(nmask, 15);
	for (unsigned r = 0; r < runs; r++) {
		struct xp_config c = config(XP_SURW, rec, 1);
		uint32_t seq[6], pat[4];
		unsigned mask = 0, np = 0;
		c.guide = g;
		struct xp_policy *p = xp_policy_new(&c, 1000 + r, 1);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(simulate(p, rec, seq, NULL), 6);
		for (unsigned k = 0; k < 6; k++) {
			if (seq[k] == 2)
				mask |= 1u << k;
			else
				pat[np++] = seq[k];
		}
		ck_assert_uint_eq(np, 4);
		ck_assert_mem_eq(pat, start, sizeof pat); /* the pattern's order */
		counts[rank[mask]]++;
		if (r == 0) {
			xp_policy_describe(p, line, sizeof line);
			ck_assert_msg(strstr(line, "from prediction start 1 (4/4 pattern events, bystanders at random)"),
				      "%s", line);
		}
		xp_policy_free(p);
	}
	double chi = chi_square(counts, 15, runs / 15.0);
	ck_assert_msg(chi < 36.12, "chi-square %.2f: the bystander is not placed uniformly", chi);
	/* and not where the recording had it every time */
	ck_assert_uint_lt(counts[rank[0x30]], runs / 10);
	xp_guide_free(g);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* ---- the recording view */

START_TEST(test_look_resyncs_after_divergence)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_WRITE, Y, 2 }, { 0, AVT_EV_WRITE, P1, 3 },
		{ 0, AVT_EV_READ, X, 4 },
	};
	struct avt_event *ev = events(s, 4);
	struct xp_rec *rec = xp_rec_new(ev, 4);
	struct xp_look l;

	xp_look_init(&l, rec, 0);
	ck_assert_int_eq(xp_look_event(&l, &ev[0]), 0);
	ck_assert_uint_eq(xp_look_next(&l, 0)->obj, Y);
	/* an event the recording does not have (near here): still in step */
	struct avt_event extra = mk(0, 1, AVT_EV_READ, 0x6010c0u, 9);
	ck_assert_int_eq(xp_look_event(&l, &extra), 0);
	ck_assert_uint_eq(xp_look_next(&l, 0)->obj, Y);
	/* the run skipped the write of Y: back in step after P1 */
	ck_assert_int_eq(xp_look_event(&l, &ev[2]), 0);
	ck_assert_uint_eq(xp_look_next(&l, 0)->kind, AVT_EV_READ);
	ck_assert_int_eq(xp_look_event(&l, &ev[3]), 0);
	ck_assert_ptr_null(xp_look_next(&l, 0));
	/* spinning parks a thread; its next event unparks it */
	for (unsigned i = 0; i < XP_YIELD_LIMIT - 1; i++)
		ck_assert(!xp_look_yield(&l, 0));
	ck_assert(xp_look_yield(&l, 0));
	uint32_t lids[] = { 0, 1 };
	size_t idx[2];
	ck_assert_int_eq(xp_look_reg(&l, 1), 0);
	ck_assert_uint_eq(xp_look_candidates(&l, lids, 2, idx), 1);
	ck_assert_uint_eq(idx[0], 1);
	/* both parked: the one parked longest ago runs */
	for (unsigned i = 0; i < XP_YIELD_LIMIT; i++)
		(void)xp_look_yield(&l, 1);
	ck_assert_uint_eq(xp_look_candidates(&l, lids, 2, idx), 1);
	ck_assert_uint_eq(idx[0], 0);
	xp_look_release(&l);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

START_TEST(test_shared_objects_and_names)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_WRITE, X, 1 }, { 0, AVT_EV_ACQUIRE, P1, 2 }, { 1, AVT_EV_READ, X, 3 },
		{ 1, AVT_EV_CREATE, 2, 4 },
	};
	struct avt_event *ev = events(s, 4);
	struct xp_rec *rec = xp_rec_new(ev, 4);
	uint64_t *objs;
	size_t n;
	enum xp_algo a;

	ck_assert_int_eq(xp_rec_shared(rec, &objs, &n), 0);
	ck_assert_uint_eq(n, 1); /* X; not P1 (one thread), not the thread id 2 */
	ck_assert_uint_eq(objs[0], X);
	free(objs);
	ck_assert(xp_conflict(AVT_EV_WRITE, X, AVT_EV_READ, X));
	ck_assert(!xp_conflict(AVT_EV_READ, X, AVT_EV_READ, X));
	ck_assert(!xp_conflict(AVT_EV_WRITE, X, AVT_EV_WRITE, Y));
	ck_assert(!xp_conflict(AVT_EV_JOIN, 1, AVT_EV_JOIN, 1));
	ck_assert(xp_conflict(AVT_EV_ACQUIRE, P1, AVT_EV_RELEASE, P1));
	for (int i = XP_PCT; i <= XP_GUIDED; i++) {
		ck_assert_int_eq(xp_algo_parse(xp_algo_name((enum xp_algo)i), &a), 0);
		ck_assert_int_eq(a, i);
	}
	ck_assert_int_eq(xp_algo_parse("nope", &a), -1);
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* Walks drawn ahead (xp_policy_budget with a view): a policy that takes
 * each budget's events with no pick ends every run exactly as one that
 * picks before every event (the ptrace path): the same threads in the
 * same order, the same draws (describe: walks), and a budget ends where
 * the walk gives the next event to another thread.  The threads waiting
 * for lock L are offered as the running thread's acquires and releases
 * leave it; an event on what the others otherwise wait for ends the
 * draws ahead.  (A lock the budget lists but another thread holds is the
 * agent's to refuse: its trylock fails, and the ptrace path picks.) */
#define L 0x603000u

struct world {
	const struct xp_rec *rec;
	uint32_t done[3];
	uint32_t holder, count; /* of L; 3: nobody */
};

static const struct xp_rev *next_of(const struct world *w, uint32_t t)
{
	return w->done[t] < xp_rec_count(w->rec, t) ? xp_rec_event(w->rec, t, w->done[t]) : NULL;
}

/* The threads a pick offers: those with events left, not about to lock L
 * held by another. */
static size_t runnable(const struct world *w, uint32_t *lids)
{
	size_t n = 0;
	for (uint32_t t = 0; t < 3; t++) {
		const struct xp_rev *r = next_of(w, t);
		if (r && !(r->kind == AVT_EV_ACQUIRE && r->obj == L && w->holder != 3 && w->holder != t))
			lids[n++] = t;
	}
	return n;
}

/* The tracer's view while t runs alone (tracer_pick_view's rules). */
static void view_of(const struct world *w, uint32_t t, struct tracer_view *v)
{
	size_t n = 0;
	memset(v, 0, sizeof *v);
	for (uint32_t o = 0; o < 3; o++) {
		const struct xp_rev *r = next_of(w, o);
		if (!r)
			continue;
		bool lock = o != t && r->kind == AVT_EV_ACQUIRE && r->obj == L;
		if (lock && w->holder != 3 && w->holder != t) {
			v->objs[v->nobjs++] = L; /* held by a third: not offered */
			continue;
		}
		v->thr[n++] = (struct tracer_view_thread){ o, lock && w->holder == t ? w->count : 0, lock ? L : 0, 0, 0 };
	}
	v->n = n;
}

static struct avt_event step(struct world *w, uint32_t t)
{
	const struct xp_rev *r = next_of(w, t);
	ck_assert_ptr_nonnull(r);
	if (r->kind == AVT_EV_ACQUIRE && r->obj == L) {
		ck_assert(w->holder == 3 || w->holder == t);
		w->holder = t;
		w->count++;
	} else if (r->kind == AVT_EV_RELEASE && r->obj == L && --w->count == 0) {
		w->holder = 3;
	}
	struct avt_event e = mk(t, w->done[t], r->kind, r->obj, r->site);
	w->done[t]++;
	return e;
}

/* t makes its next event; both policies see it. */
static void both_step(struct world *w, struct xp_policy *a, struct xp_policy *b, uint32_t t)
{
	struct avt_event e = step(w, t);
	ck_assert_int_eq(xp_policy_event(a, &e), 0);
	ck_assert_int_eq(xp_policy_event(b, &e), 0);
}

/* Both picks at the next point: the same thread, which makes its event;
 * false when nobody is left. */
static bool both_pick(struct world *w, struct xp_policy *a, struct xp_policy *b, uint32_t *picked)
{
	uint32_t lids[3];
	size_t n = runnable(w, lids);
	if (!n)
		return false;
	size_t kb = xp_policy_pick(b, lids, n);
	ck_assert_uint_eq(xp_policy_pick(a, lids, n), kb);
	*picked = lids[kb];
	return true;
}

/* The run is over: every event made, the same draws both ways. */
static void both_done(const struct world *w, struct xp_policy *a, struct xp_policy *b)
{
	for (uint32_t t = 0; t < 3; t++)
		ck_assert_uint_eq(w->done[t], xp_rec_count(w->rec, t));
	char da[256], db[256];
	xp_policy_describe(a, da, sizeof da);
	xp_policy_describe(b, db, sizeof db);
	ck_assert_str_eq(da, db);
	xp_policy_free(a);
	xp_policy_free(b);
}

START_TEST(test_surw_ahead)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_ACQUIRE, L, 1 }, { 0, AVT_EV_WRITE, X, 2 }, { 0, AVT_EV_RELEASE, L, 3 },
		{ 1, AVT_EV_ACQUIRE, L, 4 }, { 1, AVT_EV_WRITE, X, 5 }, { 1, AVT_EV_RELEASE, L, 6 },
		{ 2, AVT_EV_READ, X, 7 },    { 0, AVT_EV_ACQUIRE, L, 8 }, { 0, AVT_EV_READ, X, 9 },
		{ 0, AVT_EV_RELEASE, L, 10 }, { 1, AVT_EV_READ, X, 11 }, { 2, AVT_EV_ACQUIRE, L, 12 },
		{ 2, AVT_EV_RELEASE, L, 13 }, { 1, AVT_EV_ACQUIRE, L, 14 }, { 1, AVT_EV_WRITE, X, 15 },
		{ 1, AVT_EV_RELEASE, L, 16 }, { 0, AVT_EV_WRITE, P1, 17 }, { 2, AVT_EV_WRITE, X, 18 },
		{ 0, AVT_EV_WRITE, X, 19 },
	};
	const size_t ns = sizeof s / sizeof s[0];
	struct avt_event *ev = events(s, ns);
	struct xp_rec *rec = xp_rec_new(ev, ns);
	unsigned ahead = 0, handed = 0;

	for (unsigned nvars = 1; nvars <= 2; nvars++) { /* X; X and L */
		struct xp_config c = config(XP_SURW, rec, nvars);
		for (unsigned r = 0; r < 200; r++) {
			struct xp_policy *a = xp_policy_new(&c, 9, r), *b = xp_policy_new(&c, 9, r);
			struct world w = { rec, { 0 }, 3, 0 };
			ck_assert(a && b);
			for (;;) {
				uint32_t lids[3], t;
				size_t n;
				if (!both_pick(&w, a, b, &t))
					break;
				struct tracer_view v;
				view_of(&w, t, &v);
				struct xp_rev got[16];
				size_t nb = xp_policy_budget(a, t, &v, got, NULL, NULL, 16);
				/* the budget starts with the event t was picked for;
				 * a makes them with no pick, b with a pick before
				 * each after the first, which must give t them */
				ck_assert_uint_ge(nb, 1);
				for (size_t j = 0; j < nb; j++) {
					const struct xp_rev *x = next_of(&w, t);
					ck_assert(x && got[j].obj == x->obj && got[j].kind == x->kind);
					/* the agent's lock finds L held: the ptrace path */
					if (x->kind == AVT_EV_ACQUIRE && w.holder != 3 && w.holder != t)
						break;
					if (j > 0) {
						n = runnable(&w, lids);
						size_t k = xp_policy_pick(b, lids, n);
						ck_assert_uint_eq(lids[k], t);
						/* with both drawn, X and L are interesting */
						ahead += nvars == 2 && (x->obj == X || x->obj == L);
					}
					both_step(&w, a, b, t);
				}
				/* where it ended, both pick the same */
				uint32_t next;
				if (!both_pick(&w, a, b, &next))
					break;
				handed += next != t;
				both_step(&w, a, b, next);
			}
			both_done(&w, a, b);
		}
	}
	ck_assert_uint_gt(ahead, 100);  /* walks were drawn ahead */
	ck_assert_uint_gt(handed, 100); /* and budgets ended at lost walks */

	/* T0's P1 is what another thread waits for: no walk after it */
	struct xp_config c = config(XP_SURW, rec, 2);
	struct tracer_view v = { .thr = { { 0, 0, 0, 0, 0 }, { 1, 0, 0, 0, 0 }, { 2, 0, 0, 0, 0 } },
				 .n = 3, .objs = { P1 }, .nobjs = 1 };
	for (unsigned r = 0; r < 50; r++) {
		struct xp_policy *p = xp_policy_new(&c, 9, r);
		uint32_t t0[1] = { 0 }; /* T0 up to its W P1 */
		struct xp_rev got[16];
		for (uint32_t k = 0; k < 6; k++) {
			const struct xp_rev *rk = xp_rec_event(rec, 0, k);
			struct avt_event e = mk(0, k, rk->kind, rk->obj, rk->site);
			ck_assert_uint_eq(xp_policy_pick(p, t0, 1), 0);
			ck_assert_int_eq(xp_policy_event(p, &e), 0);
		}
		size_t nb = xp_policy_budget(p, 0, &v, got, NULL, NULL, 16);
		ck_assert_uint_eq(nb, 1); /* P1; the X after it would be a walk */
		ck_assert(got[0].obj == P1);
		xp_policy_free(p);
	}
	xp_rec_free(rec);
	free(ev);
}
END_TEST

/* Hand-over scripts (xp_policy_budget with who and the held locks known):
 * every thread at an event the agent can wait at (an acquire, a release,
 * an access) may win a walk drawn ahead, and the budget goes on with its
 * events.  Taken in order with no pick (each event by its thread), the
 * run is the one a policy that picks before every event makes: the same
 * picks everywhere, the same draws. */
static void view_parks(const struct world *w, uint32_t t, struct tracer_view *v, bool locks_known)
{
	size_t n = 0;
	memset(v, 0, sizeof *v);
	v->locks_known = locks_known;
	if (w->holder != 3)
		v->locks[v->nlocks++] = (struct tracer_view_lock){ L, w->holder, w->count };
	for (uint32_t o = 0; o < 3; o++) {
		const struct xp_rev *r = next_of(w, o);
		if (!r)
			continue;
		if (o == t) {
			v->thr[n++] = (struct tracer_view_thread){ o, 0, 0, 0, 0 };
			continue;
		}
		if (r->kind == AVT_EV_ACQUIRE && r->obj == L) {
			if (w->holder != 3 && w->holder != t) {
				v->objs[v->nobjs++] = L;
				continue;
			}
			v->thr[n++] = (struct tracer_view_thread){ o, w->holder == t ? w->count : 0, L, AVT_EV_ACQUIRE, L };
		} else {
			v->thr[n++] = (struct tracer_view_thread){ o, 0, 0, r->kind, r->obj };
		}
	}
	v->n = n;
}

START_TEST(test_surw_handover)
{
	static const struct spec s[] = {
		{ 0, AVT_EV_ACQUIRE, L, 1 }, { 1, AVT_EV_ACQUIRE, L, 2 }, { 0, AVT_EV_WRITE, X, 3 },
		{ 0, AVT_EV_RELEASE, L, 4 }, { 1, AVT_EV_READ, X, 5 },    { 1, AVT_EV_RELEASE, L, 6 },
		{ 2, AVT_EV_READ, Y, 7 },    { 0, AVT_EV_ACQUIRE, L, 8 }, { 0, AVT_EV_READ, X, 9 },
		{ 2, AVT_EV_WRITE, X, 10 },  { 0, AVT_EV_RELEASE, L, 11 }, { 1, AVT_EV_ACQUIRE, L, 12 },
		{ 1, AVT_EV_WRITE, Y, 13 },  { 1, AVT_EV_RELEASE, L, 14 }, { 2, AVT_EV_ACQUIRE, L, 15 },
		{ 2, AVT_EV_WRITE, Y, 16 },  { 2, AVT_EV_RELEASE, L, 17 }, { 0, AVT_EV_WRITE, Y, 18 },
		{ 1, AVT_EV_READ, X, 19 },   { 2, AVT_EV_READ, X, 20 },
	};
	const size_t ns = sizeof s / sizeof s[0];
	struct avt_event *ev = events(s, ns);
	struct xp_rec *rec = xp_rec_new(ev, ns);
	unsigned scripts = 0, handovers = 0, refused = 0, wild = 0;

	for (unsigned nvars = 1; nvars <= 3; nvars++) {
		struct xp_config c = config(XP_SURW, rec, nvars);
		for (unsigned r = 0; r < 300; r++) {
			struct xp_policy *a = xp_policy_new(&c, 5, r), *b = xp_policy_new(&c, 5, r);
			struct world w = { rec, { 0 }, 3, 0 };
			ck_assert(a && b);
			for (;;) {
				uint32_t lids[3], t;
				size_t n;
				if (!both_pick(&w, a, b, &t))
					break;
				struct tracer_view v;
				view_parks(&w, t, &v, true);
				struct xp_rev got[32];
				uint32_t who[32];
				size_t nb = xp_policy_budget(a, t, &v, got, who, NULL, 32);
				ck_assert_uint_ge(nb, 1);
				ck_assert_uint_eq(who[0], t);
				bool multi = false;
				for (size_t j = 0; j < nb; j++) {
					uint32_t x = who[j];
					const struct xp_rev *e = next_of(&w, x);
					if (got[j].kind == AVT_EV_NONE) {
						/* any event: x is past its recording */
						ck_assert_ptr_null(e);
						wild++;
						break;
					}
					ck_assert(e && got[j].obj == e->obj && got[j].kind == e->kind);
					/* the agent's lock finds L held: the ptrace path */
					if (e->kind == AVT_EV_ACQUIRE && w.holder != 3 && w.holder != x) {
						refused++;
						break;
					}
					if (j > 0) {
						n = runnable(&w, lids);
						size_t k = xp_policy_pick(b, lids, n);
						ck_assert_uint_eq(lids[k], x);
					}
					if (x != t && !multi) {
						multi = true;
						scripts++;
					}
					handovers += j > 0 && x != who[j - 1];
					both_step(&w, a, b, x);
				}
				uint32_t next;
				if (!both_pick(&w, a, b, &next))
					break;
				both_step(&w, a, b, next);
			}
			both_done(&w, a, b);
		}
	}
	ck_assert_uint_gt(scripts, 200);   /* budgets went on with other threads */
	ck_assert_uint_gt(handovers, 400); /* through hand-overs */
	ck_assert_uint_gt(wild, 0);        /* a thread past its recording: any events */
	/* a budget whose locks are known lists no acquire of a lock another
	 * thread holds: it ends there, where the pick decides (a thread
	 * would otherwise wait in the agent for a turn a walk gave it while
	 * it could not run) */
	ck_assert_uint_eq(refused, 0);

	/* without the held locks known (or without who), no hand-over */
	struct xp_config c = config(XP_SURW, rec, 3);
	for (unsigned r = 0; r < 100; r++) {
		struct xp_policy *p = xp_policy_new(&c, 5, r);
		struct world w = { rec, { 0 }, 3, 0 };
		uint32_t lids[3];
		size_t n = runnable(&w, lids);
		uint32_t t = lids[xp_policy_pick(p, lids, n)];
		struct tracer_view v;
		view_parks(&w, t, &v, false);
		struct xp_rev got[32];
		uint32_t who[32];
		size_t nb = xp_policy_budget(p, t, &v, got, who, NULL, 32);
		for (size_t j = 0; j < nb; j++)
			ck_assert_uint_eq(who[j], t);
		xp_policy_free(p);
	}
	xp_rec_free(rec);
	free(ev);
}
END_TEST

static Suite *explore_policy_suite(void)
{
	Suite *s = suite_create("explore_policy");
	TCase *surw = tcase_create("surw");
	TCase *pos = tcase_create("pos");
	TCase *rf = tcase_create("guided");
	TCase *misc = tcase_create("misc");

	tcase_set_timeout(surw, 60);
	tcase_add_test(surw, test_surw_uniform_two_threads);
	tcase_add_test(surw, test_surw_naive_walk_fails_the_check);
	tcase_add_test(surw, test_surw_selective);
	tcase_add_test(surw, test_surw_many_objects);
	tcase_add_test(surw, test_surw_weights_follow_the_run);
	tcase_add_test(surw, test_surw_budget);
	tcase_add_test(surw, test_surw_ahead);
	tcase_add_test(surw, test_surw_handover);
	suite_add_tcase(s, surw);
	tcase_add_test(pos, test_pos_reassigns_racing_events);
	tcase_add_test(pos, test_pos_race_is_a_coin);
	tcase_add_test(pos, test_pos_index_draws_as_the_scan);
	tcase_add_test(pos, test_portfolio_runs_are_its_members_runs);
	tcase_add_test(pos, test_portfolio_member_of_a_single_policy);
	suite_add_tcase(s, pos);
	tcase_add_test(rf, test_rf_keys);
	tcase_add_test(rf, test_guided_reaches_new_pair);
	tcase_add_test(rf, test_prediction_start_is_followed);
	tcase_add_test(rf, test_prediction_bystanders_at_random);
	suite_add_tcase(s, rf);
	tcase_add_test(misc, test_look_resyncs_after_divergence);
	tcase_add_test(misc, test_shared_objects_and_names);
	suite_add_tcase(s, misc);
	return s;
}

int main(void)
{
	return unit_run(explore_policy_suite());
}
