/*
 * PENELOPE on hand-built traces: each of the five patterns found (the
 * other thread's access recorded after the window and before it), a
 * lock-protected version of each not found, accesses ordered by
 * create/join not found, locks that only order the recorded run not
 * counted as ordering, the acquisition-history test, transactions (atomic
 * blocks delimit, call stacks), one prediction for a loop, and the
 * schedules: region I, T1 to its cut-point, T2 to e', T1's e2 when every
 * read before it keeps its writer, else the schedule ends at e'; and when
 * no schedule keeps every read, the one forcing least after the read.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "predict/model.h"
#include "predict/penelope.h"
#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

enum { X = 0x5000, Y = 0x5008, LM = 0x1000, LA = 0x1040, LB = 0x1080, CV = 0x2000 };
/* sites: T1's first and second access, the other thread's, a lock's */
enum { SA = 0x400, SB = 0x480, SC = 0x500, SL = 0x600, SD = 0x540 };

#include "predict_test.h"

static uint32_t rd(uint32_t t, uint64_t site)
{
	return ev(t, AVT_EV_READ, X, site);
}

static uint32_t wr(uint32_t t, uint64_t site)
{
	return ev(t, AVT_EV_WRITE, X, site);
}

/* One access: 'R' or 'W'. */
static uint32_t acc(uint32_t t, char k, uint64_t site)
{
	return k == 'W' ? wr(t, site) : rd(t, site);
}

/* Lock l at the lock site SL. */
static uint32_t lock(uint32_t t, uint64_t l)
{
	return acq(t, l, SL);
}

static uint32_t unlock(uint32_t t, uint64_t l)
{
	return rel(t, l, SL);
}

static void finish(uint32_t t)
{
	ev(t, AVT_EV_EXIT, 0, 0);
}

static void detect(void)
{
	finish_model();
	pr_cands_init(&cs, m);
	ck_assert_int_eq(pr_penelope(m, &cs, NULL), 0);
}

/* predict_run with penelope alone. */
static void predict(void)
{
	struct predict_opts o = { .penelope = true };
	finish_predict(&o);
}

static const struct pr_cand *find(enum pr_pattern p, uint32_t e1, uint32_t f, uint32_t e2)
{
	for (size_t i = 0; i < cs.n; i++)
		if (cs.c[i].pat == p && cs.c[i].ev[0] == e1 && cs.c[i].ev[1] == f &&
		    cs.c[i].ev[2] == e2)
			return &cs.c[i];
	return NULL;
}

static const struct {
	const char *name;
	char e1, f, e2;
	enum pr_pattern pat;
} patterns[] = {
	{ "RWR", 'R', 'W', 'R', PR_PAT_RWR }, { "RWW", 'R', 'W', 'W', PR_PAT_RWW },
	{ "WWR", 'W', 'W', 'R', PR_PAT_WWR }, { "WRW", 'W', 'R', 'W', PR_PAT_WRW },
	{ "WWW", 'W', 'W', 'W', PR_PAT_WWW },
};

/* ---- the five patterns ---- */

/* T1's window, then T2's access: e' recorded after the window. */
START_TEST(pattern_after_window_found)
{
	spawn(2);
	start(1);
	uint32_t e1 = acc(1, patterns[_i].e1, SA);
	uint32_t e2 = acc(1, patterns[_i].e2, SB);
	finish(1);
	start(2);
	uint32_t f = acc(2, patterns[_i].f, SC);
	finish(2);
	detect();
	ck_assert_msg(cs.n == 1, "%s: %zu candidates", patterns[_i].name, cs.n);
	const struct pr_cand *c = find(patterns[_i].pat, e1, f, e2);
	ck_assert_msg(c != NULL, "%s not found", patterns[_i].name);
	ck_assert_str_eq(pr_pattern_name(c->pat), patterns[_i].name);
	ck_assert_uint_eq(c->det, PR_DET_PENELOPE);
	ck_assert_uint_eq(c->thr[0], 1);
	ck_assert_uint_eq(c->thr[1], 2);
	ck_assert_uint_eq(c->cut, e1);
	ck_assert_uint_eq(c->variant, 1);
}
END_TEST

/* T2's access first, then T1's window. */
START_TEST(pattern_before_window_found)
{
	spawn(2);
	start(2);
	uint32_t f = acc(2, patterns[_i].f, SC);
	finish(2);
	start(1);
	uint32_t e1 = acc(1, patterns[_i].e1, SA);
	uint32_t e2 = acc(1, patterns[_i].e2, SB);
	finish(1);
	detect();
	ck_assert_msg(cs.n == 1, "%s: %zu candidates", patterns[_i].name, cs.n);
	const struct pr_cand *c = find(patterns[_i].pat, e1, f, e2);
	ck_assert_msg(c != NULL, "%s not found", patterns[_i].name);
	ck_assert_uint_eq(c->variant, 0);
}
END_TEST

/* The same, all three accesses inside critical sections on one lock. */
START_TEST(pattern_lock_protected_not_found)
{
	for (int before = 0; before < 2; before++) {
		if (before) { /* a fresh trace */
			teardown();
			setup();
		}
		spawn(2);
		if (before) {
			start(2);
			lock(2, LM);
			acc(2, patterns[_i].f, SC);
			unlock(2, LM);
		}
		start(1);
		lock(1, LM);
		acc(1, patterns[_i].e1, SA);
		acc(1, patterns[_i].e2, SB);
		unlock(1, LM);
		finish(1);
		if (!before) {
			start(2);
			lock(2, LM);
			acc(2, patterns[_i].f, SC);
			unlock(2, LM);
		}
		finish(2);
		detect();
		ck_assert_msg(cs.n == 0, "%s (%s the window) under a lock: %zu candidates",
			      patterns[_i].name, before ? "before" : "after", cs.n);
	}
}
END_TEST

/* T2 is created only after T0 joined T1: nothing can run in T1's window. */
START_TEST(pattern_ordered_by_create_join_not_found)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	ev(0, AVT_EV_CREATE, 1, 0x708);
	start(1);
	acc(1, patterns[_i].e1, SA);
	acc(1, patterns[_i].e2, SB);
	finish(1);
	ev(0, AVT_EV_JOIN, 1, 0x788);
	ev(0, AVT_EV_CREATE, 2, 0x710);
	start(2);
	acc(2, patterns[_i].f, SC);
	finish(2);
	detect();
	ck_assert_msg(cs.n == 0, "%s: %zu candidates", patterns[_i].name, cs.n);
}
END_TEST

/* ---- feasibility ---- */

/* Check-then-act: two critical sections on m.  The lock edge from T1's
 * second section to T2's orders the recorded run only; T1 can stand at
 * the release between its sections (the cut-point) while T2 writes. */
START_TEST(lock_edges_do_not_order)
{
	spawn(2);
	start(1);
	lock(1, LM);
	uint32_t e1 = rd(1, SA);
	uint32_t r = unlock(1, LM);
	lock(1, LM);
	uint32_t e2 = rd(1, SB);
	unlock(1, LM);
	finish(1);
	start(2);
	lock(2, LM);
	uint32_t f = wr(2, SC);
	unlock(2, LM);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *c = find(PR_PAT_RWR, e1, f, e2);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->cut, r);
}
END_TEST

/* A condition signal sent after the window orders T2's write after it. */
START_TEST(ordered_by_signal_not_found)
{
	spawn(2);
	start(2);
	lock(2, LM);
	/* a wait releases the mutex in obj2 */
	ck_assert(pr_tracebuf_event(tb, 2, AVT_EV_WAIT, CV, LM, 0, SL + 0x10, 0) != UINT64_MAX);
	start(1);
	rd(1, SA);
	rd(1, SB);
	lock(1, LM);
	ev(1, AVT_EV_SIGNAL, CV, SL + 0x20);
	unlock(1, LM);
	finish(1);
	uint64_t s = pr_tracebuf_event(tb, 2, AVT_EV_ACQUIRE, LM, CV, 0, SL + 0x10, AVT_F_COND_WAKE);
	ck_assert(s != UINT64_MAX);
	wr(2, SC);
	unlock(2, LM);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Locksets disjoint but acquisition histories not compatible: T1 holds a
 * and took b inside it, T2 holds b and took a inside it.  Neither can be
 * at its point while the other is at its own. */
START_TEST(incompatible_histories_not_found)
{
	spawn(2);
	start(1);
	lock(1, LA);
	lock(1, LB);
	unlock(1, LB);
	rd(1, SA);
	rd(1, SB);
	unlock(1, LA);
	finish(1);
	start(2);
	lock(2, LB);
	lock(2, LA);
	unlock(2, LA);
	wr(2, SC);
	unlock(2, LB);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* The same with compatible histories (T2 takes a before b, not inside). */
START_TEST(compatible_histories_found)
{
	spawn(2);
	start(1);
	lock(1, LA);
	lock(1, LB);
	unlock(1, LB);
	uint32_t e1 = rd(1, SA);
	uint32_t e2 = rd(1, SB);
	unlock(1, LA);
	finish(1);
	start(2);
	lock(2, LB);
	uint32_t f = wr(2, SC);
	unlock(2, LB);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_RWR, e1, f, e2));
}
END_TEST

/* A variable only one thread touches, or that nobody writes: nothing. */
START_TEST(unshared_or_read_only_not_found)
{
	spawn(2);
	start(1);
	rd(1, SA);
	rd(1, SB);
	ev(1, AVT_EV_WRITE, Y, SA + 8);
	ev(1, AVT_EV_WRITE, Y, SB + 8);
	finish(1);
	start(2);
	rd(2, SC);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* ---- transactions ---- */

/* begin/end delimit: a block is one transaction, and two accesses on
 * either side of a block's edge are not in one. */
START_TEST(atomic_blocks_delimit)
{
	spawn(2);
	start(1);
	uint32_t r0 = rd(1, SA);
	uint32_t b = ev(1, AVT_EV_BEGIN, 0, SD);
	uint32_t e1 = rd(1, SA + 0x10);
	uint32_t e2 = wr(1, SB);
	ev(1, AVT_EV_END, 0, SD + 8);
	rd(1, SB + 0x10);
	finish(1);
	start(2);
	uint32_t f = wr(2, SC);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *c = find(PR_PAT_RWW, e1, f, e2);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->nblame, 1); /* the block's begin */
	ck_assert_uint_eq(c->blame[0].off, pr_ev(m, b)->site_off);
	ck_assert(!find(PR_PAT_RWR, r0, f, e1));
}
END_TEST

/* With stacks, one call is a transaction; the same statement of the
 * caller calling again is a loop, not a window. */
START_TEST(stacks_one_call_is_a_transaction)
{
	spawn(2);
	start(1);
	uint32_t a = rd(1, SA);
	stack(a, 2, (uint64_t)SA, 2u, (uint64_t)0x900, 1u);
	uint32_t b = wr(1, SB);
	stack(b, 2, (uint64_t)SB, 2u, (uint64_t)0x900, 1u);
	uint32_t c2 = rd(1, SA); /* the next call from the same statement */
	stack(c2, 2, (uint64_t)SA, 3u, (uint64_t)0x900, 1u);
	finish(1);
	start(2);
	uint32_t f = wr(2, SC);
	stack(f, 1, (uint64_t)SC, 1u);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *c = find(PR_PAT_RWW, a, f, b);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->nblame, 1);
	ck_assert_uint_eq(c->blame[0].off, SA); /* a site inside the call */
	ck_assert(!find(PR_PAT_WWR, b, f, c2));
}
END_TEST

/* Accesses made directly in the thread's body: straight-line code is a
 * window (a check then an act), a later instruction then an earlier one is
 * the body's loop going round (two iterations of a worker): not one. */
START_TEST(stacks_body_loop_is_not_a_transaction)
{
	spawn(2);
	start(1);
	uint32_t a = rd(1, SA);
	stack(a, 1, (uint64_t)SA, 1u);
	uint32_t b = rd(1, SB);
	stack(b, 1, (uint64_t)SB, 1u);
	uint32_t c2 = rd(1, SA); /* the loop again */
	stack(c2, 1, (uint64_t)SA, 1u);
	finish(1);
	start(2);
	uint32_t f = wr(2, SC);
	stack(f, 1, (uint64_t)SC, 1u);
	finish(2);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_RWR, a, f, b));
	ck_assert(!find(PR_PAT_RWR, b, f, c2));
}
END_TEST

/* A loop making the same window again and again, and a culprit that
 * writes several times: one candidate, one prediction. */
START_TEST(loop_gives_one_prediction)
{
	spawn(2);
	start(1);
	for (int i = 0; i < 5; i++) {
		ev(1, AVT_EV_BEGIN, 0, SD);
		rd(1, SA);
		wr(1, SB);
		ev(1, AVT_EV_END, 0, SD + 8);
	}
	finish(1);
	start(2);
	for (int i = 0; i < 3; i++)
		wr(2, SC);
	finish(2);
	for (uint32_t t = 1; t <= 2; t++)
		ev(0, AVT_EV_JOIN, t, 0x780 + t * 8);
	ev(0, AVT_EV_EXIT, 0, 0);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].detector, "penelope");
	ck_assert_str_eq(ps.p[0].pattern, "RWW");
	ck_assert_uint_eq(ps.p[0].nobjs, 1);
	ck_assert_uint_eq(ps.p[0].objs[0], X);
}
END_TEST

/* T1's window; T2 takes its own lock LA 65 times (no edge from T1: the
 * index skips them, and the first edge to drop starts a run of its table);
 * then n rounds in which T1 and T2 take lock LM in turn, then T2's write:
 * to reach it before T1's e2, T2 must take LM n times without T1's
 * releases after the window, n reversed lock edges.  A plan drops at most
 * PR_PLAN_DROPS, so the candidate exists up to that many; _i odd: with
 * the search's small index instead of its table. */
START_TEST(far_culprit_within_drop_limit)
{
	uint32_t n = _i < 2 ? PR_PLAN_DROPS : PR_PLAN_DROPS + 1;
	if (_i % 2)
		pr_penelope_droptab_bytes = 0;
	spawn(2);
	start(1);
	start(2);
	ev(1, AVT_EV_BEGIN, 0, SD);
	uint32_t e1 = rd(1, SA);
	uint32_t e2 = wr(1, SB);
	ev(1, AVT_EV_END, 0, SD + 8);
	for (uint32_t r = 0; r < 65; r++) {
		lock(2, LA);
		unlock(2, LA);
	}
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t t = 1; t <= 2; t++) {
			lock(t, LM);
			unlock(t, LM);
		}
	uint32_t f = wr(2, SC);
	detect();
	pr_penelope_droptab_bytes = (size_t)64 << 20;
	if (n <= PR_PLAN_DROPS) {
		const struct pr_cand *c = find(PR_PAT_RWW, e1, f, e2);
		ck_assert_msg(c != NULL, "%u rounds: not found", n);
		struct pr_plan pl;
		ck_assert_int_eq(pr_penelope_plan(m, c, false, false, &pl), 0);
		ck_assert_uint_eq(pl.ndrop, n);
	} else {
		ck_assert_msg(cs.n == 0, "%u rounds: %zu candidates", n, cs.n);
	}
}
END_TEST

/* ---- schedules ---- */

/* RWR, e' after the window, no locks: T1 to e1, T2 to e', T1's e2. */
START_TEST(schedule_with_e2)
{
	spawn(2);
	start(1);
	uint32_t e1 = rd(1, SA);
	uint32_t e2 = rd(1, SB);
	finish(1);
	start(2);
	uint32_t f = wr(2, SC);
	finish(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_uint_eq(ps.p[0].events[0], e1);
	ck_assert_uint_eq(ps.p[0].events[1], f);
	ck_assert_uint_eq(ps.p[0].events[2], e2);
	ck_assert_str_eq(steps(ps.p[0].sched), "T0:3 T1:2 T2:2 T1:1 free");
	ck_assert_uint_eq(ps.p[0].context_switches, 3);
}
END_TEST

/* Check-then-act: T1 stops at the release between its sections, T2 runs
 * its whole critical section (e2 needs the lock), then T1 takes the lock
 * and does e2. */
START_TEST(schedule_locked_culprit)
{
	spawn(2);
	start(1);
	lock(1, LM);
	rd(1, SA);
	unlock(1, LM);
	lock(1, LM);
	rd(1, SB);
	unlock(1, LM);
	finish(1);
	start(2);
	lock(2, LM);
	wr(2, SC);
	unlock(2, LM);
	finish(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "RWR");
	/* T0: start, 2 creates; T1: start, acq, R, rel; T2: start, acq, W, rel;
	 * T1: acq, R */
	ck_assert_str_eq(steps(ps.p[0].sched), "T0:3 T1:4 T2:4 T1:2 free");
}
END_TEST

/* The same with a watched read of another variable after T1's release: a
 * watchpoint reports after the access, so replay can only park T1 before
 * its next request if the read is part of T1's step. */
START_TEST(schedule_parks_before_a_request)
{
	spawn(2);
	start(1);
	lock(1, LM);
	rd(1, SA);
	unlock(1, LM);
	ck_assert(pr_tracebuf_event(tb, 1, AVT_EV_READ, Y, 0, 0, SD, AVT_F_WATCHED) != UINT64_MAX);
	lock(1, LM);
	rd(1, SB);
	unlock(1, LM);
	finish(1);
	start(2);
	lock(2, LM);
	wr(2, SC);
	unlock(2, LM);
	finish(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(steps(ps.p[0].sched), "T0:3 T1:5 T2:4 T1:2 free");
}
END_TEST

/* The lost update of tests/targets/mem_log: each writer reads the index,
 * writes its slot, writes the index.  T1 as the window thread would need
 * T2 to read the index before T1 wrote it, then go on (recorded: slot 1)
 * with a different value: not kept.  T2 as the window thread reads the
 * index, T1 writes it, and the schedule ends there (T2's e2 comes after
 * T2's own read of a new value): run free. */
START_TEST(schedule_ends_at_culprit_when_a_read_changes)
{
	access_flags = (uint16_t)(_i ? AVT_F_WATCHED : 0);
	spawn(2);
	start(1);
	rd(1, SA);
	ev(1, AVT_EV_WRITE, Y, SB);
	uint32_t f = wr(1, SC);
	finish(1);
	start(2);
	uint32_t e1 = rd(2, SA);
	ev(2, AVT_EV_WRITE, Y + 8, SB);
	uint32_t e2 = wr(2, SC);
	finish(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "RWW");
	ck_assert_uint_eq(ps.p[0].threads[0], 2);
	ck_assert_uint_eq(ps.p[0].events[0], e1);
	ck_assert_uint_eq(ps.p[0].events[1], f);
	ck_assert_uint_eq(ps.p[0].events[2], e2);
	/* region I: T0's 3, T1 before its write; T2 to its read; T1's write.
	 * Watched, T2 is not parked past its read (over its watched write):
	 * that would make the read that sees a new value steer T2. */
	ck_assert_str_eq(steps(ps.p[0].sched), "T0:3 T1:3 T2:2 T1:1 free");
}
END_TEST

/* examples/bank.c's lost deposit: each thread reads the balance in one
 * critical section and writes it in another.  Whichever thread is moved,
 * one read sees a new value and its thread goes on (to write), so no
 * schedule keeps every read; the one that forces least after that read
 * still stands for the bug: T1 stops between its sections, T2 deposits up
 * to its write, the rest runs free. */
START_TEST(schedule_when_no_schedule_keeps_reads)
{
	spawn(2);
	start(1);
	lock(1, LM);
	rd(1, SA);
	unlock(1, LM);
	lock(1, LM);
	wr(1, SB);
	unlock(1, LM);
	finish(1);
	start(2);
	lock(2, LM);
	rd(2, SA);
	unlock(2, LM);
	lock(2, LM);
	wr(2, SB);
	unlock(2, LM);
	finish(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "RWW");
	ck_assert_uint_eq(ps.p[0].threads[0], 1);
	ck_assert_str_eq(steps(ps.p[0].sched), "T0:3 T1:4 T2:6 free");
}
END_TEST

/* The reads check on schedules written by hand. */
START_TEST(reads_kept)
{
	spawn(2);
	start(1);
	wr(1, SA);
	finish(1);
	start(2);
	rd(2, SB);
	rd(2, SC);
	finish(2);
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	m = pr_model_new(tr);
	ck_assert_ptr_nonnull(m);
	pr_cands_init(&cs, m);
	struct schedule *s = schedule_new();
	ck_assert_ptr_nonnull(s);
	/* T2 reads before T1 wrote, and reads again: the first read steers */
	ck_assert_int_eq(schedule_append_run(s, 0, 3), 0);
	ck_assert_int_eq(schedule_append_run(s, 2, 2), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 2), 0);
	ck_assert_int_eq(schedule_append_run(s, 2, 1), 0);
	ck_assert_int_eq(pr_penelope_reads_kept(m, s), 0);
	schedule_free(s);
	/* the read that sees a new value is T2's last: kept */
	s = schedule_new();
	ck_assert_int_eq(schedule_append_run(s, 0, 3), 0);
	ck_assert_int_eq(schedule_append_run(s, 2, 2), 0);
	ck_assert_int_eq(pr_penelope_reads_kept(m, s), 1);
	schedule_free(s);
	/* the recorded order */
	s = schedule_new();
	ck_assert_int_eq(schedule_append_run(s, 0, 3), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 2), 0);
	ck_assert_int_eq(schedule_append_run(s, 2, 3), 0);
	ck_assert_int_eq(pr_penelope_reads_kept(m, s), 1);
	schedule_free(s);
}
END_TEST

/* With penelope off, the same trace gives nothing. */
START_TEST(option_off)
{
	spawn(2);
	start(1);
	rd(1, SA);
	rd(1, SB);
	finish(1);
	start(2);
	wr(2, SC);
	finish(2);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true };
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	ck_assert_uint_eq(ps.n, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_penelope");
	int np = (int)(sizeof patterns / sizeof patterns[0]);
	TCase *p = tcase_create("patterns");
	tcase_add_checked_fixture(p, setup, teardown);
	tcase_add_loop_test(p, pattern_after_window_found, 0, np);
	tcase_add_loop_test(p, pattern_before_window_found, 0, np);
	tcase_add_loop_test(p, pattern_lock_protected_not_found, 0, np);
	tcase_add_loop_test(p, pattern_ordered_by_create_join_not_found, 0, np);
	suite_add_tcase(s, p);
	TCase *f = tcase_create("feasibility");
	tcase_add_checked_fixture(f, setup, teardown);
	tcase_add_test(f, lock_edges_do_not_order);
	tcase_add_test(f, ordered_by_signal_not_found);
	tcase_add_test(f, incompatible_histories_not_found);
	tcase_add_test(f, compatible_histories_found);
	tcase_add_test(f, unshared_or_read_only_not_found);
	suite_add_tcase(s, f);
	TCase *x = tcase_create("transactions");
	tcase_add_checked_fixture(x, setup, teardown);
	tcase_add_test(x, atomic_blocks_delimit);
	tcase_add_test(x, stacks_one_call_is_a_transaction);
	tcase_add_test(x, stacks_body_loop_is_not_a_transaction);
	tcase_add_test(x, loop_gives_one_prediction);
	tcase_add_loop_test(x, far_culprit_within_drop_limit, 0, 4);
	suite_add_tcase(s, x);
	TCase *y = tcase_create("schedules");
	tcase_add_checked_fixture(y, setup, teardown);
	tcase_add_test(y, schedule_with_e2);
	tcase_add_test(y, schedule_locked_culprit);
	tcase_add_test(y, schedule_parks_before_a_request);
	tcase_add_loop_test(y, schedule_ends_at_culprit_when_a_read_changes, 0, 2);
	tcase_add_test(y, schedule_when_no_schedule_keeps_reads);
	tcase_add_test(y, reads_kept);
	tcase_add_test(y, option_off);
	suite_add_tcase(s, y);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
