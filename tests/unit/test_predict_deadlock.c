/*
 * Lock-order deadlock prediction on hand-built traces: the inversion of
 * tests/targets/lockorder.c is found, and each pruning rule removes what
 * it must: order by create/join, a gate lock, a single thread, two
 * readers, and a deadlock the recorded run already had.  Three-thread
 * cycles, and inversions whose first occurrences are ordered but later
 * ones are not.
 */
#include <check.h>
#include <stdlib.h>

#include "predict/deadlock.h"
#include "predict/model.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

enum { LA = 0x1000, LB = 0x1040, LC = 0x1080, LG = 0x10c0, LK = 0x1100, RW = 0x1200 };

#include "predict_test.h"

/* Lock l at a site of its own (per lock and thread). */
static uint32_t lock(uint32_t t, uint64_t l)
{
	return acq(t, l, 0x100 * t + (l & 0xfff));
}

static uint32_t unlock(uint32_t t, uint64_t l)
{
	return rel(t, l, 0x100 * t + (l & 0xfff));
}

/* Thread t: lock x; lock y; unlock y; unlock x. */
static void nest(uint32_t t, uint64_t x, uint64_t y)
{
	lock(t, x);
	lock(t, y);
	unlock(t, y);
	unlock(t, x);
}

static void detect(void)
{
	finish_model();
	pr_cands_init(&cs, m);
	ck_assert_int_eq(pr_deadlock(m, &cs), 0);
}

START_TEST(lockorder_inversion_found)
{
	spawn(2);
	start(1);
	uint32_t h1 = lock(1, LA), r1 = lock(1, LB);
	unlock(1, LB);
	unlock(1, LA);
	ev(1, AVT_EV_EXIT, 0, 0);
	start(2);
	uint32_t h2 = lock(2, LB), r2 = lock(2, LA);
	unlock(2, LA);
	unlock(2, LB);
	ev(2, AVT_EV_EXIT, 0, 0);
	ev(0, AVT_EV_JOIN, 1, 0x780);
	ev(0, AVT_EV_JOIN, 2, 0x788);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *c = &cs.c[0];
	ck_assert_uint_eq(c->det, PR_DET_DEADLOCK);
	ck_assert_uint_eq(c->pat, PR_PAT_CYCLE);
	ck_assert_uint_eq(c->nthr, 2);
	/* rotated so that the smaller sites come first: T1's */
	ck_assert_uint_eq(c->thr[0], 1);
	ck_assert_uint_eq(c->thr[1], 2);
	ck_assert_uint_eq(c->ev[0], h1);
	ck_assert_uint_eq(c->ev[1], h2);
	ck_assert_uint_eq(c->ev[2], r1);
	ck_assert_uint_eq(c->ev[3], r2);
	ck_assert_uint_eq(c->lock[0], pr_obj_id(m, LA));
	ck_assert_uint_eq(c->lock[1], pr_obj_id(m, LB));
}
END_TEST

/* T0 joins T1 before it creates T2: the two orders never overlap. */
START_TEST(fork_join_ordered_pruned)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	ev(0, AVT_EV_CREATE, 1, 0x708);
	start(1);
	nest(1, LA, LB);
	ev(1, AVT_EV_EXIT, 0, 0);
	ev(0, AVT_EV_JOIN, 1, 0x780);
	ev(0, AVT_EV_CREATE, 2, 0x710);
	start(2);
	nest(2, LB, LA);
	ev(2, AVT_EV_EXIT, 0, 0);
	ev(0, AVT_EV_JOIN, 2, 0x788);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Both nest a and b inside g: g guards the inversion. */
START_TEST(gate_lock_pruned)
{
	spawn(2);
	start(1);
	lock(1, LG);
	nest(1, LA, LB);
	unlock(1, LG);
	start(2);
	lock(2, LG);
	nest(2, LB, LA);
	unlock(2, LG);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* The gate rule on its own, on witnesses the clocks would accept. */
START_TEST(gate_rule_alone)
{
	spawn(2);
	start(1);
	start(2);
	uint32_t g1 = lock(1, LG), h1 = lock(1, LA), q1 = lock(1, LB);
	uint32_t h2 = lock(2, LB), q2 = lock(2, LA);
	(void)g1;
	detect();
	uint32_t a = pr_obj_id(m, LA), b = pr_obj_id(m, LB);
	struct pr_dl_wit w[2] = { { a, b, 1, h1, q1, PR_NONE }, { b, a, 2, h2, q2, PR_NONE } };
	ck_assert(pr_dl_gate_free(m, w, 2));
	pr_model_free(m);
	trace_free(tr);
	m = NULL;
	pr_cands_release(&cs);

	setup();
	spawn(2);
	start(1);
	start(2);
	lock(1, LG);
	h1 = lock(1, LA);
	q1 = lock(1, LB);
	/* not a valid run (T2 takes g while T1 holds it): only the rule is tested */
	lock(2, LG);
	h2 = lock(2, LB);
	q2 = lock(2, LA);
	detect();
	a = pr_obj_id(m, LA);
	b = pr_obj_id(m, LB);
	struct pr_dl_wit v[2] = { { a, b, 1, h1, q1, PR_NONE }, { b, a, 2, h2, q2, PR_NONE } };
	ck_assert(!pr_dl_gate_free(m, v, 2));
	ck_assert(!pr_dl_feasible(m, v, 2));
}
END_TEST

START_TEST(single_thread_pruned)
{
	spawn(1);
	start(1);
	nest(1, LA, LB);
	nest(1, LB, LA);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Two readers of an rwlock do not block each other. */
START_TEST(readers_pruned)
{
	spawn(2);
	start(1);
	ev(1, AVT_EV_RD_ACQUIRE, RW, 0x180);
	lock(1, LB);
	unlock(1, LB);
	unlock(1, RW);
	start(2);
	lock(2, LB);
	ev(2, AVT_EV_RD_ACQUIRE, RW, 0x280);
	unlock(2, RW);
	unlock(2, LB);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

START_TEST(three_thread_cycle)
{
	spawn(3);
	start(1);
	nest(1, LA, LB);
	start(2);
	nest(2, LB, LC);
	start(3);
	nest(3, LC, LA);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.c[0].nthr, 3);
	ck_assert_uint_eq(cs.c[0].nev, 6);
}
END_TEST

/* The recorded run deadlocked on this very cycle (after one good round
 * each): nothing to predict. */
static void deadlocked_run(bool note)
{
	spawn(2);
	start(1);
	nest(1, LA, LB);
	start(2);
	nest(2, LB, LA);
	lock(1, LA);
	lock(2, LB);
	if (note)
		ck_assert_int_eq(pr_tracebuf_note(tb, "deadlock"), 0);
	detect();
}

START_TEST(observed_deadlock_not_predicted)
{
	deadlocked_run(true);
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

START_TEST(same_trace_without_deadlock_predicted)
{
	deadlocked_run(false);
	ck_assert_uint_eq(cs.n, 1);
}
END_TEST

/* T1's first a->b is ordered before T2's b->a through k, its second is
 * not: the detector must try the later occurrence. */
START_TEST(later_occurrence_found)
{
	spawn(2);
	start(1);
	nest(1, LA, LB);
	lock(1, LK);
	unlock(1, LK);
	start(2);
	lock(2, LK);
	unlock(2, LK);
	uint32_t h1 = lock(1, LA);
	lock(1, LB);
	unlock(1, LB);
	unlock(1, LA);
	nest(2, LB, LA);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.c[0].ev[0], h1);
}
END_TEST

/* A loop repeating the inversion gives one candidate. */
START_TEST(loop_gives_one_cycle)
{
	spawn(2);
	start(1);
	start(2);
	for (int i = 0; i < 200; i++) {
		nest(1, LA, LB);
		nest(2, LB, LA);
	}
	detect();
	ck_assert_uint_eq(cs.n, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_deadlock");
	TCase *c = tcase_create("cycles");
	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, lockorder_inversion_found);
	tcase_add_test(c, three_thread_cycle);
	tcase_add_test(c, later_occurrence_found);
	tcase_add_test(c, loop_gives_one_cycle);
	tcase_add_test(c, same_trace_without_deadlock_predicted);
	suite_add_tcase(s, c);
	TCase *p = tcase_create("pruning");
	tcase_add_checked_fixture(p, setup, teardown);
	tcase_add_test(p, fork_join_ordered_pruned);
	tcase_add_test(p, gate_lock_pruned);
	tcase_add_test(p, gate_rule_alone);
	tcase_add_test(p, single_thread_pruned);
	tcase_add_test(p, readers_pruned);
	tcase_add_test(p, observed_deadlock_not_predicted);
	suite_add_tcase(s, p);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
