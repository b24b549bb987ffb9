/*
 * Minimisation (minimize/): the primitives on hand-built schedules, and
 * the search against an exhaustive one on small simulated programs: each
 * program is a few threads with a few events, a thread may only start
 * after its creator's event, and it "fails" when some events happen in a
 * given order (a lost update, an atomicity violation, an order violation).
 * The simulator follows a schedule as replay does (run steps must fit,
 * free: the current thread runs on, then the others in id order), and the
 * exhaustive search enumerates every schedule of at most k switches for
 * k = 0, 1, 2, ...: the minimiser must reach that least k from any failing
 * interleaving, with a bounded number of tests.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimize/minimize.h"
#include "trace/schedule.h"
#include "unit_util.h"

#define MAXT 4
#define MAXE 12

struct ord {
	uint32_t ta, ea, tb, eb; /* (ta, ea) runs before (tb, eb) */
};

struct prog {
	uint32_t nthreads;
	uint32_t nev[MAXT];
	/* thread t (> 0) starts after event start_ev[t] of T0 has run */
	uint32_t start_ev[MAXT];
	struct ord fail[4]; /* all of them: the failure */
	size_t nfail;
	struct ord other[4]; /* all of them (if any): a different failure */
	size_t nother;
};

/* When each event ran (position), -1 never. */
struct run {
	int at[MAXT][MAXE];
	int n;
};

static bool can_start(const struct prog *p, const struct run *r, uint32_t t)
{
	return t == 0 || r->at[0][p->start_ev[t]] >= 0;
}

static void step_ev(struct run *r, uint32_t t, uint32_t *pos)
{
	r->at[t][pos[t]++] = r->n++;
}

/* Follows s: -1 infeasible, else the run in r. */
static int simulate(const struct prog *p, const struct schedule *s, struct run *r)
{
	uint32_t pos[MAXT] = { 0 };
	memset(r->at, -1, sizeof r->at);
	r->n = 0;
	uint32_t cur = 0;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct sched_step *st = &s->steps[i];
		if (st->thread >= p->nthreads)
			return -1;
		cur = st->thread;
		if (st->kind == SCHED_YIELD)
			continue;
		for (uint32_t k = 0; k < st->count; k++) {
			if (pos[cur] >= p->nev[cur] || !can_start(p, r, cur))
				return -1;
			step_ev(r, cur, pos);
		}
	}
	for (;;) { /* free: the current thread runs on, then the lowest id */
		if (pos[cur] >= p->nev[cur] || !can_start(p, r, cur)) {
			uint32_t t;
			for (t = 0; t < p->nthreads; t++)
				if (pos[t] < p->nev[t] && can_start(p, r, t))
					break;
			if (t == p->nthreads)
				return 0;
			cur = t;
		}
		step_ev(r, cur, pos);
	}
}

static bool holds(const struct run *r, const struct ord *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r->at[o[i].ta][o[i].ea] > r->at[o[i].tb][o[i].eb])
			return false;
	return n > 0;
}

/* 1: fails the way p fails; 0: passes, infeasible, or fails otherwise */
static int verdict(const struct prog *p, const struct schedule *s)
{
	struct run r;
	if (simulate(p, s, &r) < 0)
		return 0;
	if (holds(&r, p->other, p->nother))
		return 0;
	return holds(&r, p->fail, p->nfail);
}

struct oracle {
	const struct prog *p;
	unsigned calls;
};

/* In the model an event commutes with the others unless an order names it,
 * it creates a thread, or it is a thread's first (its start). */
static bool model_quiet(void *ctx, uint32_t t, uint64_t from, uint64_t n)
{
	const struct prog *p = ((struct oracle *)ctx)->p;
	for (uint64_t e = from; e < from + n; e++) {
		if (e == 0)
			return false;
		for (uint32_t u = 1; u < p->nthreads; u++)
			if (t == 0 && p->start_ev[u] == e)
				return false;
		for (size_t i = 0; i < p->nfail; i++)
			if ((p->fail[i].ta == t && p->fail[i].ea == e) || (p->fail[i].tb == t && p->fail[i].eb == e))
				return false;
		for (size_t i = 0; i < p->nother; i++)
			if ((p->other[i].ta == t && p->other[i].ea == e) || (p->other[i].tb == t && p->other[i].eb == e))
				return false;
	}
	return true;
}

static int oracle_test(void *ctx, const struct schedule *cand)
{
	struct oracle *o = ctx;
	o->calls++;
	return verdict(o->p, cand);
}

/* Every schedule of blocks (thread differs from the previous block's,
 * count within what is left) with at most `left` more switches: does one
 * fail? */
static bool any_fails(const struct prog *p, struct schedule *s, uint32_t *rem, int prev, int left)
{
	s->has_free = 1;
	if (verdict(p, s))
		return true;
	if (prev >= 0 && left == 0)
		return false; /* another block would be one switch too many */
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if ((int)t == prev)
			continue;
		for (uint32_t c = 1; c <= rem[t]; c++) {
			size_t n = s->nsteps;
			s->has_free = 0;
			ck_assert_int_eq(schedule_append_run(s, t, c), 0);
			rem[t] -= c;
			bool f = any_fails(p, s, rem, (int)t, prev < 0 ? left : left - 1);
			rem[t] += c;
			s->nsteps = n;
			if (f)
				return true;
		}
	}
	return false;
}

/* The fewest switches any schedule of p needs to fail, or -1 (none with
 * at most 6). */
static int exhaustive_min(const struct prog *p)
{
	for (int k = 0; k <= 6; k++) {
		struct schedule *s = schedule_new();
		uint32_t rem[MAXT];
		memcpy(rem, p->nev, sizeof rem);
		bool f = any_fails(p, s, rem, -1, k);
		schedule_free(s);
		if (f)
			return k;
	}
	return -1;
}

/* A random complete interleaving of p (seeded), as a schedule with free. */
static struct schedule *random_schedule(const struct prog *p, unsigned *seed)
{
	struct schedule *s = schedule_new();
	uint32_t pos[MAXT] = { 0 };
	struct run r;
	memset(r.at, -1, sizeof r.at);
	r.n = 0;
	for (;;) {
		uint32_t ok[MAXT], n = 0;
		for (uint32_t t = 0; t < p->nthreads; t++)
			if (pos[t] < p->nev[t] && can_start(p, &r, t))
				ok[n++] = t;
		if (!n)
			break;
		*seed = *seed * 1103515245u + 12345u;
		uint32_t t = ok[(*seed >> 16) % n];
		step_ev(&r, t, pos);
		ck_assert_int_eq(schedule_append_run(s, t, 1), 0);
	}
	s->has_free = 1;
	return s;
}

/* lost update: T1 and T2 each read then write (events 1 and 2 of each);
 * T0 creates them (events 0, 1) and then checks (event 2) */
static const struct prog lost_update = {
	.nthreads = 3, .nev = { 3, 4, 4 }, .start_ev = { 0, 0, 1 },
	.fail = { { 1, 1, 2, 1 }, { 2, 1, 1, 2 }, { 1, 2, 2, 2 } }, .nfail = 3,
};

/* atomicity violation: T1 reads twice (1, 3), T2 writes (2) in between;
 * the natural order (T1 first) passes */
static const struct prog rwr = {
	.nthreads = 3, .nev = { 2, 5, 4 }, .start_ev = { 0, 0, 1 },
	.fail = { { 1, 1, 2, 2 }, { 2, 2, 1, 3 } }, .nfail = 2,
};

/* order violation: T2 uses (1) before T1 initialises (3); a run where T2
 * also ran before T1's event 1 fails otherwise (and does not count) */
static const struct prog order = {
	.nthreads = 3, .nev = { 2, 5, 3 }, .start_ev = { 0, 0, 1 },
	.fail = { { 2, 1, 1, 3 } }, .nfail = 1,
	.other = { { 2, 2, 1, 1 } }, .nother = 1,
};

/* three threads, a chain: T3's event 1 before T2's 1 before T1's 2, and
 * T1's 1 first */
static const struct prog chain = {
	.nthreads = 4, .nev = { 3, 4, 3, 3 }, .start_ev = { 0, 0, 1, 2 },
	.fail = { { 1, 1, 3, 1 }, { 3, 1, 2, 1 }, { 2, 1, 1, 2 } }, .nfail = 3,
};

static void check_prog(const struct prog *p, unsigned max_tests, bool quiet)
{
	int want = exhaustive_min(p);
	ck_assert_int_ge(want, 1);
	unsigned seed = 7, found = 0;
	for (int trial = 0; trial < 400 && found < 20; trial++) {
		struct schedule *s = random_schedule(p, &seed);
		if (!verdict(p, s)) {
			schedule_free(s);
			continue;
		}
		found++;
		struct oracle o = { p, 0 };
		struct min_opts mo = { oracle_test, &o, max_tests, quiet ? model_quiet : NULL };
		struct min_stats st;
		struct schedule *m = minimize_schedule(s, &mo, &st);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(verdict(p, m), 1);
		ck_assert_int_eq((int)min_count_switches(m), want);
		ck_assert_uint_eq(st.to_switches, (size_t)want);
		ck_assert_uint_eq(st.from_switches, min_count_switches(s));
		ck_assert_uint_le(st.tests, max_tests);
		ck_assert_uint_eq(o.calls, st.tests);
		ck_assert(!st.capped);
		schedule_free(m);
		schedule_free(s);
	}
	ck_assert_uint_ge(found, 5);
}

START_TEST(exhaustive_lost_update) { check_prog(&lost_update, 60, false); check_prog(&lost_update, 60, true); }
END_TEST
START_TEST(exhaustive_rwr) { check_prog(&rwr, 60, false); check_prog(&rwr, 60, true); }
END_TEST
START_TEST(exhaustive_order) { check_prog(&order, 60, false); check_prog(&order, 60, true); }
END_TEST
START_TEST(exhaustive_chain) { check_prog(&chain, 80, false); check_prog(&chain, 80, true); }
END_TEST

static struct schedule *sched(const char *spec)
{
	/* "0:2 1:3 y1:1 2:1": thread:count, y for a yield */
	struct schedule *s = schedule_new();
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		bool y = *tok == 'y';
		unsigned t, c;
		ck_assert_int_eq(sscanf(tok + y, "%u:%u", &t, &c), 2);
		if (y)
			schedule_append_yield(s, t, c);
		else
			schedule_append_run(s, t, c);
	}
	s->has_free = 1;
	return s;
}

static void spec_of(const struct schedule *s, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < s->nsteps && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s%u:%u", i ? " " : "",
					s->steps[i].kind == SCHED_YIELD ? "y" : "", s->steps[i].thread,
					s->steps[i].count);
}

static void assert_spec(struct schedule *s, const char *want)
{
	char got[256];
	ck_assert_ptr_nonnull(s);
	spec_of(s, got, sizeof got);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(s->has_free, 1);
	schedule_free(s);
}

START_TEST(switches_listed)
{
	struct schedule *s = sched("0:2 1:3 y1:1 2:1 1:1 0:4");
	ck_assert_uint_eq(min_count_switches(s), 4);
	ck_assert_uint_eq(minimize_nblocks(s), 5);
	struct min_switch *w;
	ck_assert_uint_eq(min_list_switches(s, &w), 4);
	ck_assert_uint_eq(w[0].step, 1);
	ck_assert_uint_eq(w[0].from, 0);
	ck_assert_uint_eq(w[0].to, 1);
	ck_assert_uint_eq(w[0].from_done, 2);
	ck_assert_uint_eq(w[0].to_done, 0);
	ck_assert_uint_eq(w[1].step, 3); /* the yield is T1's, no switch */
	ck_assert_uint_eq(w[1].from_done, 3);
	ck_assert_uint_eq(w[2].from, 2);
	ck_assert_uint_eq(w[2].to_done, 3);
	ck_assert_uint_eq(w[3].from_done, 4);
	ck_assert_uint_eq(w[3].to_done, 2);
	free(w);
	schedule_free(s);
}
END_TEST

START_TEST(defer_advance_truncate)
{
	struct schedule *s = sched("0:2 1:3 2:1 1:1 0:4");
	bool drop[5] = { false, true, false, false, false };
	/* T1's first block joins its next one: 0 2 1 0 */
	assert_spec(minimize_defer(s, drop), "0:2 2:1 1:4 0:4");
	memset(drop, 0, sizeof drop);
	drop[2] = true; /* T2 has no later block: to the free part; T1's merge */
	assert_spec(minimize_defer(s, drop), "0:2 1:4 0:4");
	memset(drop, 0, sizeof drop);
	drop[0] = drop[1] = true;
	assert_spec(minimize_defer(s, drop), "2:1 1:4 0:6");
	assert_spec(minimize_advance(s, 3), "0:2 1:4 2:1 0:4");
	assert_spec(minimize_advance(s, 4), "0:6 1:3 2:1 1:1");
	ck_assert_ptr_null(minimize_advance(s, 2)); /* no earlier T2 block */
	assert_spec(minimize_truncate(s, 2), "0:2 1:3");
	assert_spec(minimize_truncate(s, 0), "");
	schedule_free(s);
}
END_TEST

START_TEST(neighbour_moves_one_event)
{
	struct schedule *s = sched("0:2 1:3 0:1 2:1");
	uint64_t nev[3] = { 5, 3, 1 };
	/* switch 0: T0 runs one more event first, taken from its next step */
	assert_spec(minimize_neighbour(s, 0, 1, nev, 3), "0:3 1:3 2:1");
	/* two events: one from its next step, one from the free part */
	assert_spec(minimize_neighbour(s, 0, 2, nev, 3), "0:4 1:3 2:1");
	ck_assert_ptr_null(minimize_neighbour(s, 0, 4, nev, 3)); /* T0 has 5 */
	ck_assert_ptr_null(minimize_neighbour(s, 0, 0, nev, 3));
	/* switch 1: T1 has no event left */
	ck_assert_ptr_null(minimize_neighbour(s, 1, 1, nev, 3));
	/* switch 2: T0's event from the free part */
	assert_spec(minimize_neighbour(s, 2, 1, nev, 3), "0:2 1:3 0:2 2:1");
	ck_assert_ptr_null(minimize_neighbour(s, 3, 1, nev, 3));
	schedule_free(s);
}
END_TEST

static int always(void *ctx, const struct schedule *c)
{
	(void)c;
	++*(unsigned *)ctx;
	return 1;
}

static int never(void *ctx, const struct schedule *c)
{
	(void)c;
	++*(unsigned *)ctx;
	return 0;
}

static int broken(void *ctx, const struct schedule *c)
{
	(void)c;
	++*(unsigned *)ctx;
	return -1;
}

START_TEST(cap_and_errors)
{
	struct schedule *s = sched("0:1 1:1 0:1 1:1 0:1 1:1 0:1 1:1 2:1 0:1");
	unsigned calls = 0;
	struct min_stats st;
	struct min_opts o = { always, &calls, 0, NULL };
	struct schedule *m = minimize_schedule(s, &o, &st);
	ck_assert_uint_eq(min_count_switches(m), 0); /* the free part alone */
	ck_assert_uint_eq(calls, st.tests);
	schedule_free(m);
	calls = 0;
	o.test = never;
	o.max_tests = 5;
	m = minimize_schedule(s, &o, &st);
	ck_assert_uint_eq(calls, 5);
	ck_assert(st.capped);
	ck_assert_uint_eq(min_count_switches(m), 9); /* nothing kept the failure */
	schedule_free(m);
	calls = 0;
	o.test = broken;
	o.max_tests = 0;
	m = minimize_schedule(s, &o, &st);
	ck_assert_uint_eq(calls, 1);
	ck_assert(st.error);
	schedule_free(m);
	calls = 0;
	o.test = never; /* uncapped: every candidate once, no repeats */
	m = minimize_schedule(s, &o, &st);
	ck_assert(!st.capped);
	ck_assert_uint_eq(calls, st.tests);
	ck_assert_uint_lt(calls, 60);
	schedule_free(m);
	schedule_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("minimize");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, switches_listed);
	tcase_add_test(tc, defer_advance_truncate);
	tcase_add_test(tc, neighbour_moves_one_event);
	tcase_add_test(tc, cap_and_errors);
	tcase_add_test(tc, exhaustive_lost_update);
	tcase_add_test(tc, exhaustive_rwr);
	tcase_add_test(tc, exhaustive_order);
	tcase_add_test(tc, exhaustive_chain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
