/*
 * explore/'s parts on their own (docs/explore.md, "The files of
 * explore/"): following a starting point (prefix.c: pick leaves it when
 * its thread cannot run, find does not; with a pattern, bystanders run
 * among its threads), the locks a look-ahead follows (sim.c, on the
 * tracer's lock model), and the table of algorithms (policy.c: every
 * algorithm has its verbs, only guided a target), and the yield steps
 * an explored run's schedule notes (replay/yields.c).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explore/policy_int.h"
#include "replay/yields.h"
#include "trace/event.h"
#include "unit_util.h"

START_TEST(test_prefix_pick_and_find)
{
	static const uint32_t t[] = { 1, 0, 1 };
	static const uint32_t both[] = { 0, 1 }, only0[] = { 0 };
	struct xp_prefix p;

	xp_prefix_init(&p, t, 3);
	ck_assert(xp_prefix_on(&p));
	ck_assert_uint_eq(xp_prefix_pick(&p, both, 2), 1);
	ck_assert_int_eq(xp_prefix_event(&p, 1), 0);
	ck_assert_uint_eq(xp_prefix_pick(&p, both, 2), 0);
	ck_assert_int_eq(xp_prefix_event(&p, 0), 0);
	/* T1 named next, only T0 can run: find says so and keeps it ... */
	ck_assert_uint_eq(xp_prefix_find(&p, only0, 1), 1);
	ck_assert(xp_prefix_on(&p));
	/* ... pick leaves it */
	ck_assert_uint_eq(xp_prefix_pick(&p, only0, 1), 1);
	ck_assert(!xp_prefix_on(&p));
	ck_assert_uint_eq(xp_prefix_find(&p, both, 2), 2);
	xp_prefix_release(&p);

	/* an event of another thread than the one named leaves it */
	xp_prefix_init(&p, t, 3);
	ck_assert_int_eq(xp_prefix_event(&p, 0), 0);
	ck_assert(!xp_prefix_on(&p));
	ck_assert_uint_eq(p.pos, 0);
	xp_prefix_release(&p);
}
END_TEST

START_TEST(test_prefix_pattern_bystanders)
{
	/* the schedule T1 T2 T1 T2, pattern T1 only: T2 is a bystander */
	static const uint32_t t[] = { 1, 2, 1, 2 }, pat[] = { 1 };
	static const uint32_t lids[] = { 1, 2 };
	struct xp_prefix p;
	unsigned by = 0;

	for (uint64_t run = 1; run <= 64; run++) {
		ck_assert_int_eq(xp_prefix_init_pattern(&p, t, 4, pat, 1, NULL, 7, run), 0);
		ck_assert_uint_eq(p.n, 2); /* T1 T1 */
		size_t i = xp_prefix_pick(&p, lids, 2);
		ck_assert_uint_lt(i, 2);
		by += lids[i] == 2;
		/* a bystander's event keeps the prefix; T1's moves it on */
		ck_assert_int_eq(xp_prefix_event(&p, 2), 0);
		ck_assert(xp_prefix_on(&p));
		ck_assert_int_eq(xp_prefix_event(&p, 1), 0);
		ck_assert_uint_eq(p.pos, 1);
		xp_prefix_release(&p);
	}
	/* weights: T1 has 2 left, T2 (no recording) 1: about a third */
	ck_assert_uint_gt(by, 8);
	ck_assert_uint_lt(by, 40);
}
END_TEST

START_TEST(test_sim_locks)
{
	struct xp_sim m = { 0 };
	struct xp_rev acq = { 0x1000, 0, AVT_EV_ACQUIRE, { 0 } }, rel = { 0x1000, 0, AVT_EV_RELEASE, { 0 } };

	ck_assert(xp_sim_is_free(&m, 0x1000));
	ck_assert_ptr_null(xp_sim_find(&m, 0x1000));
	ck_assert(xp_sim_step(&m, 1, &acq));
	ck_assert(!xp_sim_is_free(&m, 0x1000));
	/* the tracer's model holds what the look-ahead followed */
	ck_assert_uint_eq(model_holder(&m.m, 0x1000), 1);
	ck_assert(!xp_sim_step(&m, 2, &acq)); /* held by T1 */
	ck_assert(!xp_sim_step(&m, 2, &rel)); /* not T2's */
	ck_assert_uint_eq(model_holder(&m.m, 0x1000), 1);
	ck_assert(xp_sim_step(&m, 1, &acq));  /* recursive */
	ck_assert_uint_eq(xp_sim_find(&m, 0x1000)->count, 2);
	ck_assert(xp_sim_step(&m, 1, &rel));
	ck_assert(!xp_sim_is_free(&m, 0x1000));
	ck_assert(xp_sim_step(&m, 1, &rel));
	ck_assert(xp_sim_is_free(&m, 0x1000));
	/* a lock of the view: T2 holds it twice; read-held by two readers */
	ck_assert(xp_sim_hold(&m, 0x1100, 2, 2));
	ck_assert(!xp_sim_step(&m, 1, &(struct xp_rev){ 0x1100, 0, AVT_EV_ACQUIRE, { 0 } }));
	ck_assert(xp_sim_step(&m, 2, &(struct xp_rev){ 0x1100, 0, AVT_EV_RELEASE, { 0 } }));
	ck_assert(!xp_sim_is_free(&m, 0x1100));
	ck_assert(xp_sim_hold(&m, 0x1200, TRACER_VIEW_READERS, 2));
	ck_assert(!xp_sim_is_free(&m, 0x1200));
	ck_assert_uint_eq(model_holder(&m.m, 0x1200), NO_THREAD);
	/* no writer gets it, and a reader's release is not followed (an
	 * acquire and a release are a writer's here) */
	ck_assert(!xp_sim_step(&m, 1, &(struct xp_rev){ 0x1200, 0, AVT_EV_ACQUIRE, { 0 } }));
	ck_assert(!xp_sim_step(&m, 1, &(struct xp_rev){ 0x1200, 0, AVT_EV_RELEASE, { 0 } }));
	ck_assert_uint_eq(xp_sim_find(&m, 0x1200)->readers, 2);
	/* a full table follows no more locks */
	for (uint64_t o = 3; o < XP_SIM_LOCKS; o++)
		ck_assert_ptr_nonnull(xp_sim_at(&m, 0x2000 + o));
	ck_assert_ptr_null(xp_sim_at(&m, 0x9000));
	ck_assert(!xp_sim_hold(&m, 0x9000, 1, 1));
	ck_assert(!xp_sim_step(&m, 1, &(struct xp_rev){ 0x9000, 0, AVT_EV_ACQUIRE, { 0 } }));
	ck_assert_ptr_null(xp_sim_find(&m, 0x9000));
	ck_assert_ptr_nonnull(xp_sim_at(&m, 0x1000)); /* one followed already */
	xp_sim_free(&m);
}
END_TEST

START_TEST(test_table)
{
	static const struct avt_event ev[] = {
		{ .seq = 0, .thread = 0, .kind = AVT_EV_START },
		{ .seq = 1, .thread = 0, .kind = AVT_EV_WRITE, .obj = 0x4000 },
		{ .seq = 2, .thread = 0, .kind = AVT_EV_EXIT },
	};
	static const uint32_t lids[] = { 0 };
	struct xp_rec *rec = xp_rec_new(ev, 3);
	struct xp_guide *g = xp_guide_new(rec);
	char line[256];

	ck_assert_ptr_nonnull(g);
	for (int a = XP_PCT; a <= XP_GUIDED; a++) {
		struct xp_config c = { .algo = (enum xp_algo)a, .depth = 2, .nvars = 1, .nthreads_est = 1,
				       .k_est = 3, .rec = rec, .guide = g };
		if (a == XP_PCTVB)
			continue; /* needs candidate variables */
		struct xp_policy *p = xp_policy_new(&c, 1, 5);
		ck_assert_msg(p != NULL, "%s", xp_algo_name((enum xp_algo)a));
		ck_assert_uint_eq(xp_policy_pick(p, lids, 1), 0);
		ck_assert_int_eq(xp_policy_event(p, &ev[1]), 0);
		xp_policy_yield(p, 0);
		xp_policy_describe(p, line, sizeof line);
		ck_assert_msg(!strncmp(line, xp_algo_name((enum xp_algo)a), strlen(xp_algo_name((enum xp_algo)a))),
			      "%s describes itself as '%s'", xp_algo_name((enum xp_algo)a), line);
		if (a != XP_GUIDED)
			ck_assert_uint_eq(xp_policy_target(p), 0);
		xp_policy_free(p);
	}
	enum xp_algo a;
	ck_assert_int_eq(xp_algo_parse("surw", &a), 0);
	ck_assert_int_eq(a, XP_SURW);
	ck_assert_int_eq(xp_algo_parse("nope", &a), -1);
	xp_guide_free(g);
	xp_rec_free(rec);
}
END_TEST

/* Yield steps come from the picks and the events alone.  sleep_compute's
 * main under a walk: picked after its create (an event-less turn to its
 * next point), picked again, it makes an event and computes on; whether
 * the slice ends that computation before its next point (cont: the clock,
 * no decision) must not change the steps: no "yield T0 1" either way (the
 * count left from the event-less turn used to survive the event). */
START_TEST(test_yields_from_events_not_slices)
{
	for (int sliced = 0; sliced < 2; sliced++) {
		struct yields y;
		uint32_t of;
		yields_init(&y);
		ck_assert_uint_eq(yields_pick(&y, 0, false, 7, &of), 0); /* T0: create */
		ck_assert_uint_eq(yields_pick(&y, 0, false, 8, &of), 0); /* to its point */
		ck_assert_uint_eq(yields_pick(&y, 0, false, 8, &of), 0); /* its event */
		if (sliced) /* the computation outlasts the slice: T0 again */
			ck_assert_uint_eq(yields_pick(&y, 0, true, 9, &of), 0);
		ck_assert_uint_eq(yields_pick(&y, 1, sliced, 9, &of), 0); /* T1 */
		ck_assert_uint_eq(yields_pick(&y, 1, false, 10, &of), 0);
	}
	/* real yields: T0 picked three times in a row with no event (a spin
	 * barrier's arrival), then T1; a sliced pick in between is no turn */
	struct yields y;
	uint32_t of = 99;
	yields_init(&y);
	ck_assert_uint_eq(yields_pick(&y, 0, false, 3, &of), 0);
	ck_assert_uint_eq(yields_pick(&y, 0, false, 4, &of), 0);
	ck_assert_uint_eq(yields_pick(&y, 0, false, 4, &of), 0);
	ck_assert_uint_eq(yields_pick(&y, 0, true, 4, &of), 0);
	ck_assert_uint_eq(yields_pick(&y, 0, false, 4, &of), 0);
	ck_assert_uint_eq(yields_pick(&y, 1, false, 4, &of), 3);
	ck_assert_uint_eq(of, 0);
	/* and the count starts again with T1 */
	ck_assert_uint_eq(yields_pick(&y, 0, false, 4, &of), 1);
	ck_assert_uint_eq(of, 1);
}
END_TEST

static Suite *explore_parts_suite(void)
{
	Suite *s = suite_create("explore_parts");
	TCase *tc = tcase_create("parts");

	tcase_add_test(tc, test_prefix_pick_and_find);
	tcase_add_test(tc, test_prefix_pattern_bystanders);
	tcase_add_test(tc, test_sim_locks);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_yields_from_events_not_slices);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(explore_parts_suite());
}
