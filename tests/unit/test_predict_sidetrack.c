/*
 * SideTrack on hand-built traces: each rule (before-, in-, after-window),
 * the paper's Figure 4 and Figure 8 (top) cases that must not be
 * reported, Figure 8 (bottom) that must, read-only rwlock windows,
 * transaction boundaries (cond wait, signal, module runs), the loop rule,
 * dedupe of loop copies, and the call-stack rules with blame.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "predict/model.h"
#include "predict/rank.h"
#include "predict/sidetrack.h"
#include "predict/tracebuf.h"

enum { LM = 0x1000, LN = 0x1040, LK = 0x1080, RW = 0x1100, CV = 0x2000 };
/* sites: the check, the act, another thread's critical section */
enum { SA = 0x400, SB = 0x480, SC = 0x500, SR = 0x600 };

#include "predict_test.h"

/* Module 1: a library other than the program. */
static void setup_two_modules(void)
{
	setup();
	ck_assert_int_eq(pr_tracebuf_module(tb, 1, "/lib/libother.so"), 0);
}

static void detect_with(const struct predict_opts *o)
{
	finish_model();
	pr_cands_init(&cs, m);
	ck_assert_int_eq(pr_sidetrack(m, &cs, o), 0);
}

static void detect(void)
{
	detect_with(NULL);
}

static const struct pr_cand *find(enum pr_pattern p, uint32_t e1, uint32_t e2, uint32_t e3)
{
	for (size_t i = 0; i < cs.n; i++)
		if (cs.c[i].pat == p && cs.c[i].ev[0] == e1 && cs.c[i].ev[1] == e2 &&
		    cs.c[i].ev[2] == e3)
			return &cs.c[i];
	return NULL;
}

/* Check-then-act: T2's critical section came after T1's window. */
START_TEST(after_window)
{
	spawn(2);
	start(1);
	uint32_t e1 = acq(1, LM, SA);
	rel(1, LM, SA);
	uint32_t e3 = acq(1, LM, SB);
	rel(1, LM, SB);
	start(2);
	uint32_t e2 = acq(2, LM, SC);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *c = find(PR_PAT_AFTER, e1, e2, e3);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->det, PR_DET_SIDETRACK);
	ck_assert_uint_eq(c->thr[0], 1);
	ck_assert_uint_eq(c->thr[1], 2);
	ck_assert_uint_eq(c->lock[0], pr_obj_id(m, LM));
	ck_assert_uint_eq(c->nblame, 0); /* no stacks: no function to blame */
}
END_TEST

START_TEST(before_window)
{
	spawn(2);
	start(2);
	uint32_t e2 = acq(2, LM, SC);
	rel(2, LM, SC);
	start(1);
	uint32_t e1 = acq(1, LM, SA);
	rel(1, LM, SA);
	uint32_t e3 = acq(1, LM, SB);
	rel(1, LM, SB);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_BEFORE, e1, e2, e3));
}
END_TEST

START_TEST(in_window)
{
	spawn(2);
	start(1);
	uint32_t e1 = acq(1, LM, SA);
	rel(1, LM, SA);
	start(2);
	uint32_t e2 = acq(2, LM, SC);
	rel(2, LM, SC);
	uint32_t e3 = acq(1, LM, SB);
	rel(1, LM, SB);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_IN, e1, e2, e3));
}
END_TEST

/* The culprit is ordered after the window by another lock: T1 releases n
 * after its window, T2 acquires n before m.  Not concurrent. */
START_TEST(after_ordered_by_other_lock)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	acq(1, LN, SR);
	rel(1, LN, SR);
	start(2);
	acq(2, LN, SR + 0x20);
	rel(2, LN, SR + 0x20);
	acq(2, LM, SC);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Figure 4: the second critical section forks the culprit thread. */
START_TEST(figure4_fork_in_window_not_reported)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	acq(0, LM, SA);
	rel(0, LM, SA);
	acq(0, LM, SB);
	ev(0, AVT_EV_CREATE, 1, 0x708);
	rel(0, LM, SB);
	start(1);
	acq(1, LM, SC);
	rel(1, LM, SC);
	ev(1, AVT_EV_EXIT, 0, 0);
	ev(0, AVT_EV_JOIN, 1, 0x710);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Figure 8, top: T2 runs sync(m) { sync(n) } first; T1's window on m
 * inside sync(n) cannot take T2's section: T2's acquire of m happens
 * before T1's through n. */
START_TEST(figure8_top_not_reported)
{
	spawn(2);
	start(2);
	acq(2, LM, SC);
	acq(2, LN, SR);
	rel(2, LN, SR);
	rel(2, LM, SC);
	start(1);
	acq(1, LN, SR + 0x20);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	rel(1, LN, SR + 0x20);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Figure 8, bottom: T1 first; T2's sync(m) { sync(n) } afterwards is
 * concurrent with the window: an after-window error. */
START_TEST(figure8_bottom_reported)
{
	spawn(2);
	start(1);
	acq(1, LN, SR + 0x20);
	uint32_t e1 = acq(1, LM, SA);
	rel(1, LM, SA);
	uint32_t e3 = acq(1, LM, SB);
	rel(1, LM, SB);
	rel(1, LN, SR + 0x20);
	start(2);
	uint32_t e2 = acq(2, LM, SC);
	acq(2, LN, SR);
	rel(2, LN, SR);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_AFTER, e1, e2, e3));
}
END_TEST

START_TEST(rwlock_readers_do_not_interfere)
{
	spawn(3);
	start(1);
	ev(1, AVT_EV_RD_ACQUIRE, RW, SA);
	rel(1, RW, SA);
	ev(1, AVT_EV_RD_ACQUIRE, RW, SB);
	rel(1, RW, SB);
	start(2);
	ev(2, AVT_EV_RD_ACQUIRE, RW, SC);
	rel(2, RW, SC);
	start(3);
	uint32_t w = ev(3, AVT_EV_WR_ACQUIRE, RW, SC + 0x40);
	rel(3, RW, SC + 0x40);
	detect();
	/* only the writer can break the readers' window */
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.c[0].ev[1], w);
	ck_assert_uint_eq(cs.c[0].pat, PR_PAT_AFTER);
}
END_TEST

/* A cond wait gives the lock up on purpose: no window across it. */
START_TEST(cond_wait_ends_transaction)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	evx(1, AVT_EV_WAIT, CV, LM, 0, SA + 0x10, 0);
	start(2);
	acq(2, LM, SC);
	ev(2, AVT_EV_SIGNAL, CV, SC + 0x10);
	rel(2, LM, SC);
	evx(1, AVT_EV_ACQUIRE, LM, CV, 0, SA + 0x10, AVT_F_COND_WAKE);
	rel(1, LM, SB);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* A producer: put (signal inside) then finish; the consumer's critical
 * section between them is not an atomicity violation. */
START_TEST(signal_ends_transaction)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	ev(1, AVT_EV_SIGNAL, CV, SA + 0x10);
	rel(1, LM, SA);
	acq(1, LM, SB);
	ev(1, AVT_EV_BROADCAST, CV, SB + 0x10);
	rel(1, LM, SB);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* Without stacks, a run of events in one module is the transaction. */
START_TEST(module_change_ends_transaction)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	evx(1, AVT_EV_ACQUIRE, LK, 0, 1, 0x90, 0);
	evx(1, AVT_EV_RELEASE, LK, 0, 1, 0x98, 0);
	acq(1, LM, SB);
	rel(1, LM, SB);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* mutex_counter: one site, taken again and again: loop iterations. */
START_TEST(same_site_is_a_loop)
{
	spawn(2);
	start(1);
	start(2);
	for (int i = 0; i < 3; i++) {
		acq(1, LM, SA);
		rel(1, LM, SA);
		acq(2, LM, SA);
		rel(2, LM, SA);
	}
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* 500 interleaved iterations of one window and one culprit: each kind of
 * error is one candidate, not 500. */
START_TEST(loop_copies_deduplicated)
{
	spawn(2);
	start(1);
	start(2);
	for (int i = 0; i < 500; i++) {
		acq(1, LM, SA);
		rel(1, LM, SA);
		acq(1, LM, SB);
		rel(1, LM, SB);
		acq(2, LM, SC);
		rel(2, LM, SC);
	}
	detect();
	/* (A,B) before and after T2's section, and (B,A) around it */
	ck_assert_uint_eq(cs.n, 3);
	int before = 0, in = 0, after = 0;
	for (size_t i = 0; i < cs.n; i++) {
		before += cs.c[i].pat == PR_PAT_BEFORE;
		in += cs.c[i].pat == PR_PAT_IN;
		after += cs.c[i].pat == PR_PAT_AFTER;
	}
	ck_assert_int_eq(before, 1);
	ck_assert_int_eq(in, 1);
	ck_assert_int_eq(after, 1);
}
END_TEST

/* An explicit atomic block is a transaction even for one site. */
START_TEST(explicit_block)
{
	spawn(2);
	start(1);
	uint32_t bg = ev(1, AVT_EV_BEGIN, 0, 0x300);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SA);
	rel(1, LM, SA);
	ev(1, AVT_EV_END, 0, 0x310);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.c[0].nblame, 1);
	ck_assert_uint_eq(cs.c[0].blame[0].off, tr->ev[bg].site_off);
}
END_TEST

/* ---- with call stacks ---- */

/* checkthenact: both acquisitions directly in the thread's function. */
START_TEST(stacks_direct_in_thread_function)
{
	spawn(2);
	start(1);
	uint32_t a = acq(1, LM, SA), r1 = rel(1, LM, SA);
	uint32_t b = acq(1, LM, SB), r2 = rel(1, LM, SB);
	stack(a, 1, (uint64_t)SA, 7u);
	stack(r1, 1, (uint64_t)SA + 8, 7u);
	stack(b, 1, (uint64_t)SB, 7u);
	stack(r2, 1, (uint64_t)SB + 8, 7u);
	start(2);
	uint32_t c = acq(2, LM, SC), r3 = rel(2, LM, SC);
	stack(c, 1, (uint64_t)SC, 9u);
	stack(r3, 1, (uint64_t)SC + 8, 9u);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.c[0].pat, PR_PAT_AFTER);
	ck_assert_uint_eq(cs.c[0].nblame, 1);
	ck_assert_uint_eq(cs.c[0].blame[0].off, SA);
}
END_TEST

/* mutex_counter: worker() calls increment() in a loop. */
START_TEST(stacks_loop_in_caller)
{
	spawn(2);
	start(1);
	start(2);
	for (uint32_t i = 0; i < 3; i++)
		for (uint32_t t = 1; t <= 2; t++) {
			uint32_t a = acq(t, LM, SA), r = rel(t, LM, SA);
			stack(a, 2, (uint64_t)SA, 10 + i, (uint64_t)0x900, 1u);
			stack(r, 2, (uint64_t)SA + 8, 10 + i, (uint64_t)0x900, 1u);
		}
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* worker() -> process() -> increment() in a loop: process is not the
 * thread's body, so only the loop rule keeps it from being a window. */
START_TEST(stacks_loop_below_body)
{
	spawn(2);
	start(1);
	start(2);
	for (uint32_t i = 0; i < 3; i++)
		for (uint32_t t = 1; t <= 2; t++) {
			uint32_t a = acq(t, LM, SA), r = rel(t, LM, SA);
			stack(a, 3, (uint64_t)SA, 10 + i, (uint64_t)0x910, 2u, (uint64_t)0x900, 1u);
			stack(r, 3, (uint64_t)SA + 8, 10 + i, (uint64_t)0x910, 2u, (uint64_t)0x900, 1u);
		}
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* bank: alice -> deposit -> read_balance / write_balance.  deposit is
 * blamed; bob's read can run in between. */
START_TEST(stacks_blame_caller)
{
	spawn(2);
	start(1);
	uint32_t a = acq(1, LM, SA), ra = rel(1, LM, SA);
	stack(a, 3, (uint64_t)SA, 3u, (uint64_t)0x910, 2u, (uint64_t)0x950, 1u);
	stack(ra, 3, (uint64_t)SA + 8, 3u, (uint64_t)0x910, 2u, (uint64_t)0x950, 1u);
	uint32_t b = acq(1, LM, SB), rb = rel(1, LM, SB);
	stack(b, 3, (uint64_t)SB, 4u, (uint64_t)0x920, 2u, (uint64_t)0x950, 1u);
	stack(rb, 3, (uint64_t)SB + 8, 4u, (uint64_t)0x920, 2u, (uint64_t)0x950, 1u);
	start(2);
	uint32_t c = acq(2, LM, SA), rc = rel(2, LM, SA);
	stack(c, 3, (uint64_t)SA, 3u, (uint64_t)0x910, 2u, (uint64_t)0x960, 1u);
	stack(rc, 3, (uint64_t)SA + 8, 3u, (uint64_t)0x910, 2u, (uint64_t)0x960, 1u);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	const struct pr_cand *x = find(PR_PAT_AFTER, a, c, b);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->nblame, 1);
	ck_assert_uint_eq(x->blame[0].off, 0x910); /* a site in deposit */
}
END_TEST

/* condvar's producer without the signals: producer() calls put() in a
 * loop, then finish().  producer is the thread's body: its sequence of
 * operations is not meant to be atomic. */
START_TEST(stacks_thread_body_not_a_transaction)
{
	spawn(2);
	start(1);
	for (uint32_t i = 0; i < 2; i++) {
		uint32_t a = acq(1, LM, SA), r = rel(1, LM, SA);
		stack(a, 2, (uint64_t)SA, 20 + i, (uint64_t)0x930, 1u);
		stack(r, 2, (uint64_t)SA + 8, 20 + i, (uint64_t)0x930, 1u);
	}
	uint32_t f = acq(1, LM, SB), rf = rel(1, LM, SB);
	stack(f, 2, (uint64_t)SB, 30u, (uint64_t)0x938, 1u);
	stack(rf, 2, (uint64_t)SB + 8, 30u, (uint64_t)0x938, 1u);
	start(2);
	uint32_t c = acq(2, LM, SC), rc = rel(2, LM, SC);
	stack(c, 2, (uint64_t)SC, 5u, (uint64_t)0x940, 1u);
	stack(rc, 2, (uint64_t)SC + 8, 5u, (uint64_t)0x940, 1u);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* main (its caller is in libc, so it is the outermost user frame, as the
 * tracer records it) creates threads itself (it is body), and calls
 * helper(), which locks twice: helper is a transaction. */
START_TEST(stacks_main_body_and_helper)
{
	uint32_t s0 = ev(0, AVT_EV_START, UINT32_MAX, 0);
	(void)s0;
	uint32_t cr = ev(0, AVT_EV_CREATE, 1, 0x700);
	stack(cr, 1, (uint64_t)0x700, 1u);
	uint32_t a = acq(0, LM, SA), ra = rel(0, LM, SA);
	uint32_t b = acq(0, LM, SB), rb = rel(0, LM, SB);
	stack(a, 2, (uint64_t)SA, 5u, (uint64_t)0x720, 1u);
	stack(ra, 2, (uint64_t)SA + 8, 5u, (uint64_t)0x720, 1u);
	stack(b, 2, (uint64_t)SB, 5u, (uint64_t)0x720, 1u);
	stack(rb, 2, (uint64_t)SB + 8, 5u, (uint64_t)0x720, 1u);
	/* main's own two calls of other functions locking m: not a window */
	uint32_t x = acq(0, LM, SR), rx = rel(0, LM, SR);
	stack(x, 2, (uint64_t)SR, 6u, (uint64_t)0x730, 1u);
	stack(rx, 2, (uint64_t)SR + 8, 6u, (uint64_t)0x730, 1u);
	start(1);
	uint32_t c = acq(1, LM, SC), rc = rel(1, LM, SC);
	stack(c, 1, (uint64_t)SC, 1u);
	stack(rc, 1, (uint64_t)SC + 8, 1u);
	detect();
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_AFTER, a, c, b));
	ck_assert_uint_eq(cs.c[0].blame[0].off, SA); /* a site in helper */
}
END_TEST

/* --atomic: only the declared functions' calls are transactions.  The
 * callback is given a site inside the candidate function. */
static uint64_t atomic_lo, atomic_hi;
static bool atomic_in_range(void *ctx, uint16_t mod, uint64_t off)
{
	(void)ctx;
	(void)mod;
	return off >= atomic_lo && off < atomic_hi;
}

static void helper_window_trace(uint32_t *a, uint32_t *b, uint32_t *c)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	uint32_t cr = ev(0, AVT_EV_CREATE, 1, 0x700);
	stack(cr, 1, (uint64_t)0x700, 1u);
	*a = acq(0, LM, SA);
	uint32_t ra = rel(0, LM, SA);
	*b = acq(0, LM, SB);
	uint32_t rb = rel(0, LM, SB);
	stack(*a, 2, (uint64_t)SA, 5u, (uint64_t)0x720, 1u);
	stack(ra, 2, (uint64_t)SA + 8, 5u, (uint64_t)0x720, 1u);
	stack(*b, 2, (uint64_t)SB, 5u, (uint64_t)0x720, 1u);
	stack(rb, 2, (uint64_t)SB + 8, 5u, (uint64_t)0x720, 1u);
	start(1);
	*c = acq(1, LM, SC);
	uint32_t rc = rel(1, LM, SC);
	stack(*c, 1, (uint64_t)SC, 1u);
	stack(rc, 1, (uint64_t)SC + 8, 1u);
}

START_TEST(atomic_declared_function_is_checked)
{
	uint32_t a, b, c;
	helper_window_trace(&a, &b, &c);
	atomic_lo = SA < SB ? SA : SB;
	atomic_hi = (SA > SB ? SA : SB) + 1;
	struct predict_opts o = { .sidetrack = true, .atomic = atomic_in_range };
	detect_with(&o);
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_ptr_nonnull(find(PR_PAT_AFTER, a, c, b));
}
END_TEST

START_TEST(atomic_undeclared_function_is_not)
{
	uint32_t a, b, c;
	helper_window_trace(&a, &b, &c);
	atomic_lo = atomic_hi = 0; /* --atomic names some other function */
	struct predict_opts o = { .sidetrack = true, .atomic = atomic_in_range };
	detect_with(&o);
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_sidetrack");
	TCase *r = tcase_create("rules");
	tcase_add_checked_fixture(r, setup_two_modules, teardown);
	tcase_add_test(r, after_window);
	tcase_add_test(r, before_window);
	tcase_add_test(r, in_window);
	tcase_add_test(r, after_ordered_by_other_lock);
	tcase_add_test(r, figure4_fork_in_window_not_reported);
	tcase_add_test(r, figure8_top_not_reported);
	tcase_add_test(r, figure8_bottom_reported);
	tcase_add_test(r, rwlock_readers_do_not_interfere);
	tcase_add_test(r, atomic_declared_function_is_checked);
	tcase_add_test(r, atomic_undeclared_function_is_not);
	suite_add_tcase(s, r);
	TCase *x = tcase_create("transactions");
	tcase_add_checked_fixture(x, setup_two_modules, teardown);
	tcase_add_test(x, cond_wait_ends_transaction);
	tcase_add_test(x, signal_ends_transaction);
	tcase_add_test(x, module_change_ends_transaction);
	tcase_add_test(x, same_site_is_a_loop);
	tcase_add_test(x, loop_copies_deduplicated);
	tcase_add_test(x, explicit_block);
	suite_add_tcase(s, x);
	TCase *st = tcase_create("stacks");
	tcase_add_checked_fixture(st, setup_two_modules, teardown);
	tcase_add_test(st, stacks_direct_in_thread_function);
	tcase_add_test(st, stacks_loop_in_caller);
	tcase_add_test(st, stacks_loop_below_body);
	tcase_add_test(st, stacks_blame_caller);
	tcase_add_test(st, stacks_thread_body_not_a_transaction);
	tcase_add_test(st, stacks_main_body_and_helper);
	suite_add_tcase(s, st);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
