/*
 * Lock words (predict/lockword.h) on hand-built traces: a futex mutex's
 * compare-and-swap, failed compare-and-swap and unlock store become
 * acquire, trylock_fail and release; the correct twin of
 * tests/targets/futex_lock.c gets no prediction (it got races and
 * atomicity violations on the lock word, all infeasible), and the lost
 * update under the lock is predicted on the balance alone; a CAS loop on
 * a counter or a stack head, a flag set once and a word another thread
 * writes while one holds it are no locks, and a word that looks like a
 * lock word (futex calls on it, a failed compare-and-swap) says why.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "predict/lockword.h"
#include "predict/model.h"
#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

enum { L = 0x5000, BAL = 0x5040, TOP = 0x5080 };
/* futex_lock.c's sites: the lock's compare-and-swap and futex wait, the
 * unlock's store and wake, and the balance's read and write */
enum { CAS = 0x430, WAITS = 0x440, STORE = 0x510, WAKES = 0x520, RD = 0x660, WR = 0x740 };

#include "predict_test.h"

static uint32_t locked(uint32_t t, uint64_t w, uint64_t site)
{
	return evx(t, AVT_EV_RMW, w, 0, 0, site, AVT_F_ATOMIC);
}

/* A compare-and-swap that failed: a locked read. */
static uint32_t cas_failed(uint32_t t, uint64_t w, uint64_t site)
{
	return evx(t, AVT_EV_READ, w, 0, 0, site, AVT_F_ATOMIC);
}

static uint32_t lock_(uint32_t t)
{
	return locked(t, L, CAS);
}

static uint32_t unlock_(uint32_t t)
{
	uint32_t e = locked(t, L, STORE); /* atomic_store: an xchg */
	ev(t, AVT_EV_FUTEX_WAKE, L, WAKES);
	return e;
}

/* T1 and T2 deposit under the futex lock; T2's first try meets T1's
 * lock (a failed compare-and-swap and a futex wait).  split: the read
 * and the write of the balance in two critical sections (futex_lock.c),
 * else in one (futex_lock_ok.c).  The events of interest in e[]. */
static void bank(bool split, uint32_t *e)
{
	spawn(2);
	start(1);
	start(2);
	e[0] = lock_(1);
	e[1] = cas_failed(2, L, CAS);
	ev(2, AVT_EV_FUTEX_WAIT, L, WAITS);
	ev(1, AVT_EV_READ, BAL, RD);
	if (split) {
		unlock_(1);
		lock_(1);
	}
	ev(1, AVT_EV_WRITE, BAL, WR);
	e[2] = unlock_(1);
	e[3] = lock_(2);
	ev(2, AVT_EV_READ, BAL, RD);
	if (split) {
		unlock_(2);
		lock_(2);
	}
	ev(2, AVT_EV_WRITE, BAL, WR);
	unlock_(2);
	finish_and_join(2);
}

START_TEST(futex_mutex_is_a_lock)
{
	uint32_t e[4];
	struct pr_lockwords lw;
	const struct trace *d;
	bank(false, e);
	finish_trace();
	ck_assert_int_eq(pr_lockwords_find(tr, &lw, &d), 0);
	ck_assert_uint_eq(lw.n, 1);
	ck_assert(lw.w[0].addr == L && lw.w[0].lock);
	ck_assert_uint_eq(lw.w[0].pairs, 2);
	ck_assert_ptr_null(lw.w[0].why);
	ck_assert_ptr_ne(d, tr);
	ck_assert_uint_eq(d->nev, tr->nev);
	ck_assert_uint_eq(d->ev[e[0]].kind, AVT_EV_ACQUIRE);
	ck_assert_uint_eq(d->ev[e[1]].kind, AVT_EV_TRYLOCK_FAIL);
	ck_assert_uint_eq(d->ev[e[2]].kind, AVT_EV_RELEASE);
	ck_assert_uint_eq(d->ev[e[3]].kind, AVT_EV_ACQUIRE);
	ck_assert(d->ev[e[3]].obj == L && d->ev[e[3]].seq == tr->ev[e[3]].seq);
	/* the recorded trace is untouched: replay matches against it */
	ck_assert_uint_eq(tr->ev[e[0]].kind, AVT_EV_RMW);
	pr_lockwords_trace_free(tr, d);
	pr_lockwords_release(&lw);
}
END_TEST

/* Every detector on: the correct twin has nothing to predict (before, the
 * lock word's own accesses made races and atomicity violations whose
 * replays were INFEASIBLE); the split one has its lost update on the
 * balance, and no access anomaly of the lock word. */
START_TEST(futex_mutex_predictions)
{
	uint32_t e[4];
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true, .order = true };
	bank(_i == 1, e);
	finish_predict(&o);
	if (_i == 0)
		ck_assert_uint_eq(ps.n, 0);
	bool lost = false;
	for (size_t i = 0; i < ps.n; i++) {
		const struct prediction *p = &ps.p[i];
		for (unsigned k = 0; k < p->nobjs; k++)
			ck_assert(p->objs[k] != L || !strcmp(p->detector, "sidetrack"));
		lost |= !strcmp(p->pattern, "RWW") && p->nobjs == 1 && p->objs[0] == BAL;
	}
	ck_assert(lost == (_i == 1));
	ck_assert_uint_eq(ps.words.n, 1);
	ck_assert(ps.words.w[0].lock);
}
END_TEST

static void expect_no_lock(uint64_t w, bool listed, const char *why)
{
	struct pr_lockwords lw;
	const struct trace *d;
	finish_trace();
	ck_assert_int_eq(pr_lockwords_find(tr, &lw, &d), 0);
	ck_assert_ptr_eq(d, tr);
	size_t k = 0;
	while (k < lw.n && lw.w[k].addr != w)
		k++;
	if (!listed) {
		ck_assert_uint_eq(k, lw.n);
	} else {
		ck_assert_uint_lt(k, lw.n);
		ck_assert(!lw.w[k].lock);
		ck_assert_str_eq(lw.w[k].why, why);
	}
	pr_lockwords_release(&lw);
}

/* A Treiber stack's push and pop CAS the head; another thread's
 * successful CAS comes between one thread's CAS and its next write, and
 * one failed: no lock, and said why. */
START_TEST(cas_loop_on_stack_head)
{
	spawn(2);
	start(1);
	start(2);
	ev(1, AVT_EV_READ, TOP, 0x400);
	locked(1, TOP, 0x410); /* push */
	ev(2, AVT_EV_READ, TOP, 0x400);
	cas_failed(2, TOP, 0x410);
	ev(2, AVT_EV_READ, TOP, 0x400);
	locked(2, TOP, 0x410);
	locked(1, TOP, 0x490); /* pop */
	finish_and_join(2);
	expect_no_lock(TOP, true, "another thread wrote it while one held it");
}
END_TEST

/* A counter's CAS loop run by one thread at a time (the recording need
 * not interleave them): the same compare-and-swap "takes" and "gives
 * back", which no lock does. */
START_TEST(cas_loop_on_counter)
{
	spawn(2);
	start(1);
	start(2);
	for (uint32_t t = 1; t <= 2; t++)
		for (int i = 0; i < 3; i++) {
			ev(t, AVT_EV_READ, TOP, 0x400);
			locked(t, TOP, 0x410);
		}
	cas_failed(2, TOP, 0x410);
	finish_and_join(2);
	expect_no_lock(TOP, true, "one instruction both takes and gives it back");
}
END_TEST

/* A flag a futex wait sleeps on, set once by a locked store (C++20
 * std::atomic::wait's notify): nothing gives it back.  _i 1: the same
 * without futex calls, and a locked increment: not even listed. */
START_TEST(flag_set_once)
{
	spawn(2);
	start(1);
	start(2);
	ev(1, AVT_EV_READ, TOP, 0x400);
	if (_i == 0)
		ev(1, AVT_EV_FUTEX_WAIT, TOP, 0x408);
	locked(2, TOP, 0x410);
	if (_i == 0)
		ev(2, AVT_EV_FUTEX_WAKE, TOP, 0x418);
	ev(1, AVT_EV_READ, TOP, 0x400);
	finish_and_join(2);
	expect_no_lock(TOP, _i == 0, "its last locked write is not followed by its writer's store");
}
END_TEST

/* The pattern, but no compare-and-swap failed and no futex call: a
 * waiter count's locked increment and decrement (libstdc++'s
 * std::atomic::wait) or an uncontended CAS look the same without values,
 * so nothing is taken for a lock, and nothing is listed. */
START_TEST(no_evidence_no_lock)
{
	spawn(2);
	start(1);
	start(2);
	locked(1, TOP, 0x410);
	ev(2, AVT_EV_READ, TOP, 0x400);
	locked(1, TOP, 0x420);
	locked(2, TOP, 0x410);
	locked(2, TOP, 0x420);
	finish_and_join(2);
	expect_no_lock(TOP, false, NULL);
}
END_TEST

/* Between T1's lock and its unlock, T2 stores to the word: no mutual
 * exclusion, no lock. */
START_TEST(store_while_held)
{
	spawn(2);
	start(1);
	start(2);
	lock_(1);
	ev(2, AVT_EV_WRITE, L, 0x600);
	unlock_(1);
	finish_and_join(2);
	expect_no_lock(L, true, "another thread wrote it while one held it");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_lockword");
	TCase *c = tcase_create("lockword");
	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, futex_mutex_is_a_lock);
	tcase_add_loop_test(c, futex_mutex_predictions, 0, 2);
	tcase_add_test(c, cas_loop_on_stack_head);
	tcase_add_test(c, cas_loop_on_counter);
	tcase_add_loop_test(c, flag_set_once, 0, 2);
	tcase_add_test(c, store_while_held);
	tcase_add_test(c, no_evidence_no_lock);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
