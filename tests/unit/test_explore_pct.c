/*
 * explore's priority policies: the PRNG, PCT's strict priorities and
 * change points, PCTVB's variable-bounded change points and its odds on
 * rare variables, thread bounding's permutations (Lemma 4.1 coverage,
 * checked exhaustively), spin demotion, determinism.
 */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explore/pct.h"
#include "trace/event.h"
#include "unit_util.h"

#define HOT 0x601040u
#define RARE 0x601080u
#define LOCK 0x602000u

static struct avt_event ev(uint32_t thread, unsigned kind, uint64_t obj)
{
	struct avt_event e;

	memset(&e, 0, sizeof e);
	e.thread = thread;
	e.kind = (uint16_t)kind;
	e.obj = obj;
	e.site_mod = AVT_MOD_NONE;
	return e;
}

static struct xp_config pct(unsigned depth, unsigned n, uint64_t k)
{
	struct xp_config c;

	memset(&c, 0, sizeof c);
	c.algo = XP_PCT;
	c.depth = depth;
	c.nthreads_est = n;
	c.k_est = k;
	return c;
}

static struct xp_run *run_new(const struct xp_config *c, uint64_t seed, uint64_t run)
{
	struct xp_run *r = xp_run_new(c, seed, run);

	ck_assert_ptr_nonnull(r);
	return r;
}

static void feed(struct xp_run *r, const struct avt_event *e)
{
	ck_assert_int_eq(xp_run_event(r, e), 0);
}

/* Threads 0..n-1 from highest to lowest priority. */
static void order(const struct xp_run *r, uint32_t n, uint32_t *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = i;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (xp_run_priority(r, out[j]) > xp_run_priority(r, out[i])) {
				uint32_t t = out[i];
				out[i] = out[j];
				out[j] = t;
			}
}

/* ---- PRNG */

START_TEST(test_rng_known_answers)
{
	/* Reference values from an independent implementation of
	 * splitmix64 + xoshiro256** (Blackman, Vigna). */
	struct xp_rng r;

	xp_rng_seed(&r, 0);
	ck_assert_uint_eq(r.s[0], 0xe220a8397b1dcdafull);
	ck_assert_uint_eq(xp_rng_next(&r), 0x99ec5f36cb75f2b4ull);
	ck_assert_uint_eq(xp_rng_next(&r), 0xbf6e1f784956452aull);
	ck_assert_uint_eq(xp_rng_next(&r), 0x1a5f849d4933e6e0ull);
	xp_rng_seed(&r, 12345);
	ck_assert_uint_eq(xp_rng_next(&r), 0xbe6a36374160d49bull);
}
END_TEST

START_TEST(test_rng_deterministic)
{
	struct xp_rng a, b, c;
	int differ = 0;

	xp_rng_seed(&a, 42);
	xp_rng_seed(&b, 42);
	xp_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = xp_rng_next(&a);
		ck_assert_uint_eq(x, xp_rng_next(&b));
		differ += x != xp_rng_next(&c);
	}
	ck_assert_int_gt(differ, 990);

	/* run streams: same (seed, run) equal, neighbours unrelated */
	xp_rng_seed_run(&a, 7, 3);
	xp_rng_seed_run(&b, 7, 3);
	xp_rng_seed_run(&c, 7, 4);
	differ = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t x = xp_rng_next(&a);
		ck_assert_uint_eq(x, xp_rng_next(&b));
		differ += x != xp_rng_next(&c);
	}
	ck_assert_int_eq(differ, 100);
}
END_TEST

START_TEST(test_rng_below_range)
{
	static const uint64_t ns[] = { 1, 2, 3, 7, 1000, (1ull << 63) + 1, UINT64_MAX };
	struct xp_rng r;

	xp_rng_seed(&r, 1);
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
		for (int i = 0; i < 2000; i++)
			ck_assert_uint_lt(xp_rng_below(&r, ns[k]), ns[k]);
}
END_TEST

START_TEST(test_rng_below_uniform)
{
	struct xp_rng r;
	unsigned bins[6] = { 0 };
	unsigned low = 0;

	xp_rng_seed(&r, 2);
	for (int i = 0; i < 60000; i++)
		bins[xp_rng_below(&r, 6)]++;
	for (int b = 0; b < 6; b++) {
		ck_assert_uint_gt(bins[b], 9500);
		ck_assert_uint_lt(bins[b], 10500);
	}
	/* n = 3 * 2^62: plain x % n would put half the draws below 2^62,
	 * an unbiased draw a third */
	for (int i = 0; i < 30000; i++)
		low += xp_rng_below(&r, 3ull << 62) < (1ull << 62);
	ck_assert_uint_gt(low, 9400);
	ck_assert_uint_lt(low, 10600);
}
END_TEST

/* ---- PCT */

START_TEST(test_pct_strict_priority)
{
	/* depth 1: no change points; every subset of candidates yields its
	 * highest thread, whatever events run */
	struct xp_config c = pct(1, 4, 100);

	for (uint64_t run = 0; run < 50; run++) {
		struct xp_run *r = run_new(&c, 9, run);
		uint32_t ord[4];
		int64_t seen[4];

		order(r, 4, ord);
		for (uint32_t i = 0; i < 4; i++) {
			int64_t p = xp_run_priority(r, i);
			ck_assert_int_ge(p, 1);
			ck_assert_int_le(p, 4);
			seen[i] = p;
		}
		for (uint32_t i = 0; i < 4; i++)
			for (uint32_t j = i + 1; j < 4; j++)
				ck_assert_int_ne(seen[i], seen[j]);
		for (int step = 0; step < 200; step++) {
			unsigned mask = 1 + (unsigned)step % 15;
			uint32_t lids[4];
			size_t n = 0, got;
			uint32_t want = UINT32_MAX;

			for (uint32_t i = 0; i < 4; i++)
				if (mask & (1u << i))
					lids[n++] = i;
			for (uint32_t i = 0; i < 4 && want == UINT32_MAX; i++)
				if (mask & (1u << ord[i]))
					want = ord[i];
			got = xp_run_pick(r, lids, n);
			ck_assert_uint_lt(got, n);
			ck_assert_uint_eq(lids[got], want);
			struct avt_event e = ev(lids[got], step % 2 ? AVT_EV_ACQUIRE : AVT_EV_WRITE, LOCK);
			feed(r, &e);
		}
		ck_assert_uint_eq(xp_run_fired(r), 0);
		xp_run_free(r);
	}
}
END_TEST

START_TEST(test_pct_change_point)
{
	/* depth 2, k_est 10: after exactly one of the ten events its thread
	 * drops to priority 1, below everybody; nothing else changes.  Every
	 * k in 1..10 happens over the runs. */
	struct xp_config c = pct(2, 3, 10);
	unsigned at[11] = { 0 };

	for (uint64_t run = 0; run < 500; run++) {
		struct xp_run *r = run_new(&c, 5, run);
		unsigned changes = 0;

		for (unsigned k = 1; k <= 10; k++) {
			uint32_t th = k % 3;
			int64_t before[3];
			struct avt_event e = ev(th, k % 2 ? AVT_EV_ACQUIRE : AVT_EV_CREATE, k % 2 ? LOCK : 2);

			for (uint32_t i = 0; i < 3; i++)
				before[i] = xp_run_priority(r, i);
			feed(r, &e);
			for (uint32_t i = 0; i < 3; i++) {
				int64_t p = xp_run_priority(r, i);
				if (p == before[i])
					continue;
				ck_assert_uint_eq(i, th);
				ck_assert_int_eq(p, 1);
				changes++;
				at[k]++;
			}
		}
		ck_assert_uint_eq(changes, 1);
		ck_assert_uint_eq(xp_run_fired(r), 1);
		/* the dropped thread loses to both others */
		for (uint32_t i = 0; i < 3; i++)
			if (xp_run_priority(r, i) == 1) {
				uint32_t lids[3] = { i, (i + 1) % 3, (i + 2) % 3 };
				ck_assert_uint_ne(xp_run_pick(r, lids, 3), 0);
			}
		xp_run_free(r);
	}
	for (unsigned k = 1; k <= 10; k++)
		ck_assert_uint_gt(at[k], 20);
}
END_TEST

START_TEST(test_pct_depth3_priorities)
{
	/* depth 3: two change points, priorities 1 and 2, both orders */
	struct xp_config c = pct(3, 2, 20);
	unsigned first_is_1 = 0, first_is_2 = 0;

	for (uint64_t run = 0; run < 200; run++) {
		struct xp_run *r = run_new(&c, 11, run);
		int64_t first = 0;
		unsigned changes = 0;

		for (unsigned k = 1; k <= 20; k++) {
			uint32_t th = k % 2;
			int64_t before = xp_run_priority(r, th);
			struct avt_event e = ev(th, AVT_EV_READ, HOT);

			feed(r, &e);
			if (xp_run_priority(r, th) != before) {
				int64_t p = xp_run_priority(r, th);
				ck_assert(p == 1 || p == 2);
				if (!changes++)
					first = p;
			}
		}
		ck_assert_uint_eq(xp_run_fired(r), 2);
		ck_assert_uint_eq(changes, 2);
		first_is_1 += first == 1;
		first_is_2 += first == 2;
		xp_run_free(r);
	}
	ck_assert_uint_gt(first_is_1, 50);
	ck_assert_uint_gt(first_is_2, 50);

	/* k_est = d-1 + 1: which priority the last event gets must not
	 * depend on where it is (an unshuffled Floyd sample never gives the
	 * last event priority 1) */
	c = pct(3, 3, 3);
	first_is_1 = first_is_2 = 0;
	for (uint64_t run = 0; run < 300; run++) {
		struct xp_run *r = run_new(&c, 12, run);
		int64_t before = xp_run_priority(r, 2);
		for (uint32_t th = 0; th < 3; th++) {
			struct avt_event e = ev(th, AVT_EV_ACQUIRE, LOCK);
			feed(r, &e);
		}
		if (xp_run_priority(r, 2) != before) {
			first_is_1 += xp_run_priority(r, 2) == 1;
			first_is_2 += xp_run_priority(r, 2) == 2;
		}
		xp_run_free(r);
	}
	ck_assert_uint_gt(first_is_1, 60);
	ck_assert_uint_gt(first_is_2, 60);
}
END_TEST

/* A toy program: thread i has len[i] events on objs[i][*]; the run picks
 * among threads with events left and feeds the chosen event. */
static size_t simulate(const struct xp_config *c, uint64_t seed, uint64_t run,
		       uint32_t *picks, size_t cap)
{
	struct xp_run *r = run_new(c, seed, run);
	unsigned left[4] = { 6, 6, 6, 6 };
	size_t np = 0;

	for (;;) {
		uint32_t lids[4];
		size_t n = 0, i;

		for (uint32_t t = 0; t < 4; t++)
			if (left[t])
				lids[n++] = t;
		if (n == 0)
			break;
		i = xp_run_pick(r, lids, n);
		ck_assert_uint_lt(i, n);
		ck_assert_uint_lt(np, cap);
		picks[np++] = lids[i];
		left[lids[i]]--;
		struct avt_event e = ev(lids[i], left[lids[i]] % 2 ? AVT_EV_WRITE : AVT_EV_RELEASE,
					left[lids[i]] % 3 ? HOT : LOCK);
		feed(r, &e);
	}
	xp_run_free(r);
	return np;
}

START_TEST(test_pct_same_seed_same_picks)
{
	struct xp_config c = pct(3, 4, 24);
	uint32_t a[32], b[32];
	unsigned differ = 0;

	for (uint64_t run = 0; run < 20; run++) {
		size_t na = simulate(&c, 77, run, a, 32);
		size_t nb = simulate(&c, 77, run, b, 32);
		ck_assert_uint_eq(na, 24);
		ck_assert_uint_eq(nb, 24);
		ck_assert_mem_eq(a, b, na * sizeof a[0]);
		if (run > 0) {
			uint32_t prev[32];
			simulate(&c, 77, run - 1, prev, 32);
			differ += memcmp(prev, a, na * sizeof a[0]) != 0;
		}
	}
	ck_assert_uint_gt(differ, 15);
}
END_TEST

START_TEST(test_pct_everyone_first)
{
	struct xp_config c = pct(2, 4, 50);
	unsigned first[4] = { 0 };

	for (uint64_t run = 0; run < 400; run++) {
		struct xp_run *r = run_new(&c, 3, run);
		uint32_t lids[4] = { 0, 1, 2, 3 };
		first[lids[xp_run_pick(r, lids, 4)]]++;
		xp_run_free(r);
	}
	for (int t = 0; t < 4; t++)
		ck_assert_uint_gt(first[t], 60);
}
END_TEST

START_TEST(test_pct_late_threads)
{
	/* estimate 2 threads, 6 turn up: distinct initial priorities >= d,
	 * the late thread T5 is sometimes highest, sometimes lowest; and the
	 * order the caller names threads in does not matter */
	struct xp_config c = pct(3, 2, 50);
	unsigned top = 0, bottom = 0;

	for (uint64_t run = 0; run < 300; run++) {
		struct xp_run *r = run_new(&c, 8, run);
		struct xp_run *s = run_new(&c, 8, run);
		uint32_t la[3] = { 5, 0, 3 }, lb[3] = { 3, 5, 0 };
		uint32_t ord[6];

		ck_assert_uint_eq(la[xp_run_pick(r, la, 3)], lb[xp_run_pick(s, lb, 3)]);
		for (uint32_t i = 0; i < 6; i++) {
			ck_assert_int_ge(xp_run_priority(r, i), 3);
			ck_assert_int_eq(xp_run_priority(r, i), xp_run_priority(s, i));
		}
		order(r, 6, ord);
		for (uint32_t i = 1; i < 6; i++)
			ck_assert_int_gt(xp_run_priority(r, ord[i - 1]), xp_run_priority(r, ord[i]));
		top += ord[0] == 5;
		bottom += ord[5] == 5;
		xp_run_free(r);
		xp_run_free(s);
	}
	ck_assert_uint_gt(top, 20);
	ck_assert_uint_gt(bottom, 20);
}
END_TEST

/* ---- PCTVB */

START_TEST(test_pctvb_only_chosen_variables)
{
	static const struct xp_var vars[] = {
		{ 0x1000, 40 }, { 0x2000, 40 }, { 0x3000, 40 }, { LOCK, 40 },
	};
	struct xp_config c;
	unsigned hit_var[4] = { 0 };

	memset(&c, 0, sizeof c);
	c.algo = XP_PCTVB;
	c.depth = 4;
	c.nvars = 1;
	c.nthreads_est = 3;
	c.k_est = 400;
	c.vars = vars;
	c.nvars_all = 4;
	for (uint64_t run = 0; run < 300; run++) {
		struct xp_run *r = run_new(&c, 21, run);
		uint64_t obj_hit = 0;

		for (unsigned k = 0; k < 400; k++) {
			uint32_t th = k % 3;
			int64_t before = xp_run_priority(r, th);
			struct avt_event e;

			switch (k % 5) {
			case 0: e = ev(th, AVT_EV_ACQUIRE, LOCK); break;
			case 1: e = ev(th, AVT_EV_READ, 0x1000 + 0x1000 * (k / 5 % 3)); break;
			case 2: e = ev(th, AVT_EV_WRITE, 0x9000); break;   /* not a candidate */
			case 3: e = ev(th, AVT_EV_CREATE, 0x1000); break;  /* obj is a thread id */
			default: e = ev(th, AVT_EV_RELEASE, LOCK); break;
			}
			if (e.kind == AVT_EV_CREATE)
				e.obj = 2; /* a child id */
			feed(r, &e);
			if (xp_run_priority(r, th) == before)
				continue;
			ck_assert(e.kind != AVT_EV_CREATE);
			ck_assert(e.obj != 0x9000);
			if (obj_hit)
				ck_assert_uint_eq(e.obj, obj_hit); /* v = 1 */
			obj_hit = e.obj;
			ck_assert_int_lt(xp_run_priority(r, th), 4);
		}
		for (int i = 0; i < 4; i++)
			hit_var[i] += obj_hit == vars[i].obj;
		xp_run_free(r);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_uint_gt(hit_var[i], 30);
}
END_TEST

START_TEST(test_pctvb_thread_ids_are_not_variables)
{
	/* obj of start/create/join is a thread id: never an access to a
	 * variable whose obj happens to be equal */
	static const struct xp_var vars[] = { { 2, 5 } };
	static const unsigned kinds[] = { AVT_EV_START, AVT_EV_CREATE, AVT_EV_JOIN,
					  AVT_EV_EXIT, AVT_EV_BEGIN, AVT_EV_END };
	struct xp_config c = pct(2, 3, 100);

	c.algo = XP_PCTVB;
	c.nvars = 1;
	c.vars = vars;
	c.nvars_all = 1;
	for (uint64_t run = 0; run < 20; run++) {
		struct xp_run *r = run_new(&c, 6, run);
		for (unsigned k = 0; k < 30; k++) {
			struct avt_event e = ev(k % 2, kinds[k % 6], 2);
			feed(r, &e);
		}
		ck_assert_uint_eq(xp_run_fired(r), 0);
		for (unsigned k = 0; k < 5; k++) {
			struct avt_event e = ev(0, AVT_EV_WRITE, 2);
			feed(r, &e);
		}
		ck_assert_uint_eq(xp_run_fired(r), 1);
		xp_run_free(r);
	}
}
END_TEST

/* 1000 hot accesses and 2 rare ones (at 300 and 700), threads alternate;
 * true if the single change point (d = 2) landed on a rare access. */
static bool rare_hit(const struct xp_config *c, uint64_t run)
{
	struct xp_run *r = run_new(c, 1234, run);
	bool rare = false;
	unsigned hot = 0;

	for (unsigned k = 0; k < 1002; k++) {
		uint32_t th = k % 2;
		bool is_rare = k == 300 || k == 700;
		int64_t before = xp_run_priority(r, th);
		struct avt_event e = ev(th, is_rare ? AVT_EV_WRITE : AVT_EV_READ, is_rare ? RARE : HOT);

		hot += !is_rare;
		feed(r, &e);
		if (xp_run_priority(r, th) != before)
			rare = is_rare;
	}
	ck_assert_uint_eq(hot, 1000);
	ck_assert_uint_eq(xp_run_fired(r), 1);
	xp_run_free(r);
	return rare;
}

START_TEST(test_pctvb_rare_variable_odds)
{
	static const struct xp_var vars[] = { { HOT, 1000 }, { RARE, 2 } };
	struct xp_config vb, p;
	unsigned nvb = 0, npct = 0;
	const unsigned runs = 2000;

	memset(&vb, 0, sizeof vb);
	vb.algo = XP_PCTVB;
	vb.depth = 2;
	vb.nvars = 1;
	vb.nthreads_est = 2;
	vb.k_est = 1002;
	vb.vars = vars;
	vb.nvars_all = 2;
	p = pct(2, 2, 1002);
	for (uint64_t run = 0; run < runs; run++) {
		nvb += rare_hit(&vb, run);
		npct += rare_hit(&p, run);
	}
	/* PCTVB: 1/2 (pick RARE, then either access); PCT: 2/1002 */
	ck_assert_uint_gt(nvb, runs * 4 / 10);
	ck_assert_uint_lt(nvb, runs * 6 / 10);
	ck_assert_uint_lt(npct, 20);
}
END_TEST

/* ---- spinning */

START_TEST(test_yield_demotion)
{
	struct xp_config c = pct(1, 3, 10);
	struct xp_run *r = run_new(&c, 4, 0);
	uint32_t lids[3] = { 0, 1, 2 };
	uint32_t ord[3];
	struct avt_event e;

	order(r, 3, ord);
	ck_assert_uint_eq(lids[xp_run_pick(r, lids, 3)], ord[0]);
	/* below the limit, and an event resets the count */
	for (unsigned i = 0; i + 1 < XP_YIELD_LIMIT; i++)
		xp_run_yield(r, ord[0]);
	e = ev(ord[0], AVT_EV_READ, HOT);
	feed(r, &e);
	for (unsigned i = 0; i + 1 < XP_YIELD_LIMIT; i++)
		xp_run_yield(r, ord[0]);
	ck_assert_uint_eq(lids[xp_run_pick(r, lids, 3)], ord[0]);
	/* the limit-th slice in a row: below everybody */
	xp_run_yield(r, ord[0]);
	ck_assert_uint_eq(lids[xp_run_pick(r, lids, 3)], ord[1]);
	ck_assert_int_lt(xp_run_priority(r, ord[0]), xp_run_priority(r, ord[2]));
	ck_assert_uint_eq(xp_run_pick(r, &ord[0], 1), 0);
	/* the next one to spin goes lower still */
	for (unsigned i = 0; i < XP_YIELD_LIMIT; i++)
		xp_run_yield(r, ord[1]);
	ck_assert_int_lt(xp_run_priority(r, ord[1]), xp_run_priority(r, ord[0]));
	ck_assert_uint_eq(lids[xp_run_pick(r, lids, 3)], ord[2]);
	xp_run_free(r);
}
END_TEST

START_TEST(test_yield_limit_config)
{
	struct xp_config c = pct(1, 2, 10);
	struct xp_run *r;
	int64_t p;

	c.yield_limit = 1;
	r = run_new(&c, 4, 0);
	p = xp_run_priority(r, 0);
	xp_run_yield(r, 0);
	ck_assert_int_lt(xp_run_priority(r, 0), p);
	ck_assert_int_le(xp_run_priority(r, 0), 0);
	xp_run_yield(r, 99); /* unknown thread: ignored */
	ck_assert_int_eq(xp_run_priority(r, 99), INT64_MIN);
	xp_run_free(r);
}
END_TEST

/* ---- thread bounding */

/* Does every ordered t-subset of 0..m-1 appear in one of the perms? */
static bool covers(const uint32_t *perms, uint64_t np, uint32_t m, unsigned t)
{
	unsigned char *seen;
	uint32_t pos[16], idx[4];
	size_t cells = 1;
	bool all = true;

	ck_assert_uint_le(m, 16);
	ck_assert_uint_le(t, 4);
	for (unsigned i = 0; i < t; i++)
		cells *= m;
	seen = calloc(cells, 1);
	ck_assert_ptr_nonnull(seen);
	for (uint64_t p = 0; p < np; p++) {
		for (uint32_t i = 0; i < m; i++)
			pos[perms[p * m + i]] = i;
		/* every increasing t-tuple of positions: the elements there,
		 * in that order */
		for (size_t cell = 0; cell < cells; cell++) {
			size_t x = cell;
			bool ok = true;
			for (unsigned i = 0; i < t; i++) {
				idx[i] = (uint32_t)(x % m);
				x /= m;
			}
			for (unsigned i = 1; i < t && ok; i++)
				ok = pos[idx[i - 1]] < pos[idx[i]];
			if (ok)
				seen[cell] = 1;
		}
	}
	for (size_t cell = 0; cell < cells; cell++) {
		size_t x = cell;
		bool distinct = true;
		for (unsigned i = 0; i < t; i++) {
			idx[i] = (uint32_t)(x % m);
			x /= m;
		}
		for (unsigned i = 0; i < t; i++)
			for (unsigned j = i + 1; j < t; j++)
				distinct = distinct && idx[i] != idx[j];
		if (distinct && !seen[cell])
			all = false;
	}
	free(seen);
	return all;
}

static void check_family(uint32_t m, unsigned t, uint64_t seed)
{
	uint64_t np = xp_perm_budget(m, t);
	uint32_t *perms = malloc(np * m * sizeof *perms);
	struct xp_rng r;

	ck_assert_ptr_nonnull(perms);
	xp_rng_seed(&r, seed);
	for (uint64_t p = 0; p < np; p++) {
		unsigned char hit[16] = { 0 };
		xp_perm(&r, perms + p * m, m);
		for (uint32_t i = 0; i < m; i++) {
			ck_assert_uint_lt(perms[p * m + i], m);
			ck_assert(!hit[perms[p * m + i]]);
			hit[perms[p * m + i]] = 1;
		}
	}
	ck_assert(covers(perms, np, m, t));
	free(perms);
}

START_TEST(test_perm_budget)
{
	/* ceil(24 (ln 18 + ln 100)) = ceil(179.89), ceil(6 (ln 20 + ln 100)) */
	ck_assert_uint_eq(xp_perm_budget(6, 3), 180);
	ck_assert_uint_eq(xp_perm_budget(10, 2), 46);
	ck_assert_uint_eq(xp_perm_budget(10, 1), 1);
	ck_assert_uint_eq(xp_perm_budget(2, 3), 1);
	ck_assert_uint_gt(xp_perm_budget(600, 3), xp_perm_budget(6, 3));
	ck_assert_uint_gt(xp_perm_budget(6, 4), xp_perm_budget(6, 3));
	ck_assert_uint_eq(xp_perm_budget(100, 40), UINT64_MAX);
}
END_TEST

START_TEST(test_perm_covers_m6_t3)
{
	for (uint64_t seed = 0; seed < 5; seed++)
		check_family(6, 3, seed);
}
END_TEST

START_TEST(test_perm_covers_m10_t2)
{
	for (uint64_t seed = 0; seed < 5; seed++)
		check_family(10, 2, seed);
}
END_TEST

START_TEST(test_perm_checker_can_fail)
{
	/* the identity over and over covers one order only; a reversed copy
	 * adds the other order for t = 2 but not all of t = 3 */
	uint32_t p[2 * 6];

	for (uint32_t i = 0; i < 6; i++) {
		p[i] = i;
		p[6 + i] = 5 - i;
	}
	ck_assert(!covers(p, 1, 6, 2));
	ck_assert(covers(p, 2, 6, 2));
	ck_assert(!covers(p, 2, 6, 3));
}
END_TEST

static struct xp_config tb_config(unsigned n, unsigned contexts, uint64_t k)
{
	struct xp_config c;

	memset(&c, 0, sizeof c);
	c.algo = XP_TB;
	c.threads = 3;
	c.contexts = contexts;
	c.nthreads_est = n;
	c.k_est = k;
	return c;
}

START_TEST(test_tb_runs_cover_orders)
{
	/* c = 0: the initial priority orders of budget(4, 3) runs show every
	 * 3 of the 4 threads in every order */
	struct xp_config c = tb_config(4, 0, 100);
	uint64_t np = xp_perm_budget(4, 3);
	uint32_t *perms = malloc(np * 4 * sizeof *perms);

	ck_assert_ptr_nonnull(perms);
	for (uint64_t run = 0; run < np; run++) {
		struct xp_run *r = run_new(&c, 99, run);
		order(r, 4, perms + run * 4);
		for (uint32_t i = 0; i < 4; i++) {
			ck_assert_int_ge(xp_run_priority(r, i), 1);
			ck_assert_int_le(xp_run_priority(r, i), 4);
		}
		xp_run_free(r);
	}
	ck_assert(covers(perms, np, 4, 3));
	free(perms);
}
END_TEST

START_TEST(test_tb_change_point_priority)
{
	/* n = 3, c = 1: the change point gives P_4, a rank of 1..4 that is
	 * sometimes above another thread's (unlike PCT, always lowest) */
	struct xp_config c = tb_config(3, 1, 30);
	unsigned raised_above = 0, below_all = 0;

	for (uint64_t run = 0; run < 300; run++) {
		struct xp_run *r = run_new(&c, 17, run);
		int64_t seen[4];
		unsigned fired = 0;

		for (uint32_t i = 0; i < 3; i++)
			seen[i] = xp_run_priority(r, i);
		for (unsigned k = 1; k <= 30; k++) {
			uint32_t th = k % 3;
			int64_t before = xp_run_priority(r, th);
			struct avt_event e = ev(th, AVT_EV_ACQUIRE, LOCK);
			feed(r, &e);
			int64_t p = xp_run_priority(r, th);
			if (p == before)
				continue;
			fired++;
			ck_assert_int_ge(p, 1);
			ck_assert_int_le(p, 4);
			for (uint32_t i = 0; i < 3; i++)
				ck_assert_int_ne(p, seen[i]); /* a fragment of its own */
			bool above = false;
			for (uint32_t i = 0; i < 3; i++)
				above = above || (i != th && p > xp_run_priority(r, i));
			raised_above += above;
			below_all += !above;
		}
		ck_assert_uint_le(fired, 1);
		ck_assert_uint_eq(xp_run_fired(r), 1);
		if (run == 0) {
			char buf[256];
			xp_run_describe(r, buf, sizeof buf);
			ck_assert_ptr_nonnull(strstr(buf, "tb c=1 seed=17 run=0 prio T0="));
			ck_assert_ptr_nonnull(strstr(buf, " T2="));
			ck_assert_ptr_nonnull(strstr(buf, "=T"));
		}
		xp_run_free(r);
	}
	ck_assert_uint_gt(raised_above, 100);
	ck_assert_uint_gt(below_all, 30);
}
END_TEST

START_TEST(test_tb_with_variables)
{
	static const struct xp_var vars[] = { { HOT, 50 }, { RARE, 50 } };
	struct xp_config c = tb_config(2, 2, 1000);

	c.nvars = 1;
	c.vars = vars;
	c.nvars_all = 2;
	for (uint64_t run = 0; run < 100; run++) {
		struct xp_run *r = run_new(&c, 5, run);
		for (unsigned k = 0; k < 300; k++) {
			uint32_t th = k % 2;
			int64_t before = xp_run_priority(r, th);
			struct avt_event e = ev(th, AVT_EV_READ, k % 3 == 0 ? 0x7000 : k % 3 == 1 ? HOT : RARE);
			feed(r, &e);
			if (xp_run_priority(r, th) != before)
				ck_assert_uint_ne(e.obj, 0x7000);
		}
		ck_assert_uint_eq(xp_run_fired(r), 2);
		xp_run_free(r);
	}
}
END_TEST

/* ---- config, describe */

START_TEST(test_config_refused)
{
	struct xp_config c = pct(0, 2, 10);
	int quiet = unit_quiet_begin();

	ck_assert_ptr_null(xp_run_new(&c, 1, 0));
	c = pct(2, 2, 10);
	c.algo = XP_PCTVB; /* nvars 0 */
	ck_assert_ptr_null(xp_run_new(&c, 1, 0));
	c.nvars = 1;
	c.nvars_all = 3; /* vars NULL */
	ck_assert_int_eq(xp_config_check(&c), -1);
	c.nvars_all = 0;
	ck_assert_int_eq(xp_config_check(&c), 0);
	unit_quiet_end(quiet);
}
END_TEST

START_TEST(test_describe)
{
	static const struct xp_var vars[] = { { 0x4c1040, 12 } };
	struct xp_config c = pct(2, 2, 1);
	struct xp_run *r = run_new(&c, 7, 2);
	struct avt_event e = ev(1, AVT_EV_READ, HOT);
	char buf[256], small[12];

	xp_run_describe(r, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "pct d=2 seed=7 run=2 prio T0="));
	ck_assert_ptr_nonnull(strstr(buf, " cp 1@ev1"));
	ck_assert_ptr_null(strstr(buf, "=T1"));
	feed(r, &e);
	xp_run_describe(r, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, " cp 1@ev1=T1"));
	for (unsigned i = 0; i < XP_YIELD_LIMIT; i++)
		xp_run_yield(r, 0);
	xp_run_describe(r, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, " dropped T0"));
	xp_run_describe(r, small, sizeof small);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_str_eq(small + sizeof small - 4, "...");
	xp_run_describe(r, small, 1);
	ck_assert_str_eq(small, "");
	xp_run_describe(r, NULL, 0);
	xp_run_free(r);

	memset(&c, 0, sizeof c);
	c.algo = XP_PCTVB;
	c.depth = 2;
	c.nvars = 1;
	c.vars = vars;
	c.nvars_all = 1;
	r = run_new(&c, 1, 0);
	xp_run_describe(r, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "pctvb d=2 v=1 "));
	ck_assert_ptr_nonnull(strstr(buf, " vars 0x4c1040/12 cp 1@0x4c1040#"));
	xp_run_free(r);
}
END_TEST

static Suite *explore_pct_suite(void)
{
	Suite *s = suite_create("explore_pct");
	TCase *rng = tcase_create("rng");
	TCase *p = tcase_create("pct");
	TCase *vb = tcase_create("pctvb");
	TCase *tbc = tcase_create("tb");
	TCase *misc = tcase_create("misc");

	/* statistical and exhaustive checks: seconds of CPU, more on a
	 * loaded machine than Check's default 4 s allow */
	tcase_set_timeout(vb, 120);
	tcase_set_timeout(tbc, 120);

	tcase_add_test(rng, test_rng_known_answers);
	tcase_add_test(rng, test_rng_deterministic);
	tcase_add_test(rng, test_rng_below_range);
	tcase_add_test(rng, test_rng_below_uniform);
	suite_add_tcase(s, rng);
	tcase_add_test(p, test_pct_strict_priority);
	tcase_add_test(p, test_pct_change_point);
	tcase_add_test(p, test_pct_depth3_priorities);
	tcase_add_test(p, test_pct_same_seed_same_picks);
	tcase_add_test(p, test_pct_everyone_first);
	tcase_add_test(p, test_pct_late_threads);
	suite_add_tcase(s, p);
	tcase_add_test(vb, test_pctvb_only_chosen_variables);
	tcase_add_test(vb, test_pctvb_thread_ids_are_not_variables);
	tcase_add_test(vb, test_pctvb_rare_variable_odds);
	suite_add_tcase(s, vb);
	tcase_add_test(tbc, test_perm_budget);
	tcase_add_test(tbc, test_perm_covers_m6_t3);
	tcase_add_test(tbc, test_perm_covers_m10_t2);
	tcase_add_test(tbc, test_perm_checker_can_fail);
	tcase_add_test(tbc, test_tb_runs_cover_orders);
	tcase_add_test(tbc, test_tb_change_point_priority);
	tcase_add_test(tbc, test_tb_with_variables);
	suite_add_tcase(s, tbc);
	tcase_add_test(misc, test_yield_demotion);
	tcase_add_test(misc, test_yield_limit_config);
	tcase_add_test(misc, test_config_refused);
	tcase_add_test(misc, test_describe);
	suite_add_tcase(s, misc);
	return s;
}

int main(void)
{
	return unit_run(explore_pct_suite());
}
