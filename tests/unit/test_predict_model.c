/*
 * The prediction model on hand-built traces: vector clocks and each kind
 * of happens-before edge, locksets after every event, acquisition
 * histories and their compatibility (PENELOPE Section 3.2).
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "predict/model.h"
#include "predict/tracebuf.h"

enum { LA = 0x1000, LB = 0x1040, LC = 0x1080, LM = 0x10c0, CV = 0x2000, SEM = 0x3000,
       BAR = 0x4000, RW = 0x5000 };


#define PREDICT_TEST_OWN_SITES /* one site per event */
#include "predict_test.h"

static uint32_t ev2(uint32_t t, enum avt_kind k, uint64_t obj, uint64_t obj2, uint16_t flags)
{
	return evx(t, k, obj, obj2, 0, 0x100 + pr_tracebuf_nevents(tb), flags);
}

static uint32_t ev(uint32_t t, enum avt_kind k, uint64_t obj)
{
	return ev2(t, k, obj, 0, 0);
}

/* T0 creates T1 and T2; each takes lock LM once; T0 joins both. */
START_TEST(vc_fork_join_lock)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);                  /* 1 */
	ev(0, AVT_EV_CREATE, 2);                  /* 2 */
	uint32_t s1 = ev(1, AVT_EV_START, 0);     /* 3 */
	uint32_t a1 = ev(1, AVT_EV_ACQUIRE, LM);  /* 4 */
	uint32_t r1 = ev(1, AVT_EV_RELEASE, LM);  /* 5 */
	ev(1, AVT_EV_EXIT, 0);                    /* 6 */
	uint32_t s2 = ev(2, AVT_EV_START, 0);     /* 7 */
	uint32_t a2 = ev(2, AVT_EV_ACQUIRE, LM);  /* 8 */
	ev(2, AVT_EV_RELEASE, LM);                /* 9 */
	ev(2, AVT_EV_EXIT, 0);                    /* 10 */
	uint32_t j1 = ev(0, AVT_EV_JOIN, 1);      /* 11 */
	uint32_t j2 = ev(0, AVT_EV_JOIN, 2);      /* 12 */
	finish_model();

	/* fork: the child starts after its create, not after the other's */
	ck_assert_uint_eq(pr_vc_at(m, s1, 0), 2);
	ck_assert_uint_eq(pr_vc_at(m, s1, 1), 1);
	ck_assert_uint_eq(pr_vc_at(m, s2, 0), 3);
	ck_assert_uint_eq(pr_vc_at(m, s2, 1), 0);
	ck_assert(!pr_hb(m, s1, s2) && !pr_hb(m, s2, s1));
	/* lock: T2's acquire comes after T1's release, and only through it */
	ck_assert_uint_eq(pr_vc_at(m, a2, 1), 3);
	ck_assert(pr_hb(m, r1, a2) && pr_hb(m, a1, a2));
	ck_assert(!pr_hb_pre(m, r1, a2) && !pr_hb_pre(m, a1, a2));
	ck_assert(!pr_hb(m, a2, a1));
	ck_assert_uint_eq(m->in_lock[a2], r1);
	ck_assert_uint_eq(m->in_lock[a1], PR_NONE);
	ck_assert_uint_eq(pr_vc_pre_at(m, a2, 2), 1);
	ck_assert_uint_eq(pr_vc_pre_at(m, a2, 1), 0);
	/* join: after everything the child did */
	ck_assert_uint_eq(pr_vc_at(m, j1, 1), 4);
	ck_assert_uint_eq(pr_vc_at(m, j1, 2), 0); /* T1 never heard of T2 */
	ck_assert_uint_eq(pr_vc_at(m, j2, 2), 4);
	uint32_t all[3];
	pr_vc_get(m, j2, all);
	ck_assert_uint_eq(all[0], 5);
	ck_assert_uint_eq(all[1], 4);
	ck_assert_uint_eq(all[2], 4);
}
END_TEST

START_TEST(vc_cond_signal_wake)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(1, AVT_EV_START, 0);
	ev(1, AVT_EV_ACQUIRE, LM);
	uint32_t w = ev2(1, AVT_EV_WAIT, CV, LM, 0);
	uint32_t a = ev(0, AVT_EV_ACQUIRE, LM);
	uint32_t sig = ev(0, AVT_EV_SIGNAL, CV);
	uint32_t r = ev(0, AVT_EV_RELEASE, LM);
	uint32_t wake = ev2(1, AVT_EV_ACQUIRE, LM, CV, AVT_F_COND_WAKE);
	ev(1, AVT_EV_RELEASE, LM);
	/* a signal before the wait cannot have woken this one */
	ev(0, AVT_EV_SIGNAL, CV);
	ev(1, AVT_EV_ACQUIRE, LM);
	ev2(1, AVT_EV_WAIT, CV, LM, 0);
	uint32_t wake2 = ev2(1, AVT_EV_ACQUIRE, LM, CV, AVT_F_COND_WAKE | AVT_F_TIMED_OUT);
	finish_model();

	ck_assert_uint_eq(m->lock[w], pr_obj_id(m, LM));
	ck_assert_uint_eq(m->in_lock[a], w);         /* the wait released the mutex */
	ck_assert_uint_eq(m->in_sync[wake], sig);
	ck_assert_uint_eq(m->in_lock[wake], r);
	ck_assert(pr_hb(m, sig, wake));
	ck_assert(pr_hb_pre(m, sig, wake));          /* not only through the mutex */
	ck_assert_uint_eq(m->in_sync[wake2], PR_NONE);
	ck_assert_uint_eq(m->ls[w], 0);
	ck_assert_uint_eq(pr_ls_size(m, m->ls[wake]), 1);
}
END_TEST

START_TEST(vc_barrier_sem_trylock)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(1, AVT_EV_START, 0);
	uint32_t x0 = ev(0, AVT_EV_ACQUIRE, LA);
	ev(0, AVT_EV_RELEASE, LA);
	uint32_t y1 = ev(1, AVT_EV_ACQUIRE, LB);
	ev(1, AVT_EV_RELEASE, LB);
	uint32_t b0 = ev(0, AVT_EV_BARRIER, BAR);    /* episode 1: T0 returns first */
	uint32_t b1 = ev(1, AVT_EV_BARRIER, BAR);
	uint32_t after0 = ev(0, AVT_EV_ACQUIRE, LC);
	ev(0, AVT_EV_RELEASE, LC);
	uint32_t c0 = ev(0, AVT_EV_BARRIER, BAR);    /* episode 2 */
	uint32_t c1 = ev(1, AVT_EV_BARRIER, BAR);
	uint32_t post = ev(0, AVT_EV_SEM_POST, SEM);
	uint32_t swait = ev(1, AVT_EV_SEM_WAIT, SEM);
	uint32_t hold = ev(0, AVT_EV_ACQUIRE, LA);
	uint32_t tfail = ev(1, AVT_EV_TRYLOCK_FAIL, LA);
	uint32_t rel = ev(0, AVT_EV_RELEASE, LA);
	finish_model();

	/* all arrivals before all returns, both ways */
	ck_assert(pr_hb(m, y1, b0));
	ck_assert(pr_hb(m, x0, b1));
	ck_assert(!pr_hb(m, b1, b0));
	ck_assert(!pr_hb(m, after0, b1));            /* T0 ran on after episode 1 */
	ck_assert(pr_hb(m, after0, c1));
	ck_assert(pr_hb(m, b1, c0));
	ck_assert(pr_hb(m, post, swait));
	ck_assert(pr_hb(m, hold, tfail));            /* it saw the lock held */
	ck_assert(pr_hb(m, tfail, rel));             /* ... before it was released */
	ck_assert_uint_eq(m->lock[tfail], pr_obj_id(m, LA));
}
END_TEST

START_TEST(vc_rwlock_readers)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(0, AVT_EV_CREATE, 2);
	ev(1, AVT_EV_START, 0);
	ev(2, AVT_EV_START, 0);
	ev(1, AVT_EV_RD_ACQUIRE, RW);
	ev(2, AVT_EV_RD_ACQUIRE, RW);
	uint32_t r1 = ev(1, AVT_EV_RELEASE, RW);
	uint32_t r2 = ev(2, AVT_EV_RELEASE, RW);
	uint32_t w = ev(0, AVT_EV_WR_ACQUIRE, RW);
	finish_model();
	/* a writer waits for every reader, not only the last */
	ck_assert(pr_hb(m, r1, w) && pr_hb(m, r2, w));
	ck_assert(m->objrw[pr_obj_id(m, RW)]);
	ck_assert(m->in_lock[w] & PR_REF_SNAP);
}
END_TEST

START_TEST(vc_snapshots_shared)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	for (int i = 0; i < 1000; i++) {
		ev(0, AVT_EV_ACQUIRE, LA);
		ev(0, AVT_EV_RELEASE, LA);
	}
	finish_model();
	/* one thread alone never gets news from others: one clock copy */
	ck_assert_uint_le(m->nsnap, 2);
	ck_assert_uint_eq(pr_vc_at(m, 2000, 0), 2001);
}
END_TEST

START_TEST(model_rejects_bad_tindex)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_ACQUIRE, LA);
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	tr->ev[1].tindex = 5;
	/* the error message is expected: keep the suite's output clean */
	int quiet = unit_quiet_begin();
	m = pr_model_new(tr);
	unit_quiet_end(quiet);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(lockset_nested_and_not)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	uint32_t a = ev(0, AVT_EV_ACQUIRE, LA);
	uint32_t b = ev(0, AVT_EV_ACQUIRE, LB);
	uint32_t ra = ev(0, AVT_EV_RELEASE, LA);   /* not the innermost */
	uint32_t rec = ev2(0, AVT_EV_ACQUIRE, LB, 0, AVT_F_RECURSIVE);
	uint32_t rrec = ev2(0, AVT_EV_RELEASE, LB, 0, AVT_F_RECURSIVE);
	uint32_t rb = ev(0, AVT_EV_RELEASE, LB);
	uint32_t rd = ev(0, AVT_EV_RD_ACQUIRE, RW);
	ev(0, AVT_EV_RELEASE, RW);
	finish_model();

	ck_assert_uint_eq(pr_ls_size(m, m->ls[a]), 1);
	ck_assert_uint_eq(pr_ls_size(m, m->ls[b]), 2);
	ck_assert_uint_eq(pr_ls_size(m, m->ls[ra]), 1);
	ck_assert(pr_ls_find(m, m->ls[ra], pr_obj_id(m, LB)));
	ck_assert(!pr_ls_find(m, m->ls[ra], pr_obj_id(m, LA)));
	ck_assert_uint_eq(m->lsn[pr_ls_find(m, m->ls[ra], pr_obj_id(m, LB))].acq, b);
	/* inner levels of a recursive mutex change nothing */
	ck_assert_uint_eq(m->ls[rec], m->ls[ra]);
	ck_assert_uint_eq(m->ls[rrec], m->ls[ra]);
	ck_assert_uint_eq(m->ls[rb], 0);
	ck_assert_uint_eq(pr_ls_before(m, b), m->ls[a]);
	/* the stretch of held locks around b starts at a */
	ck_assert_uint_eq(pr_stretch_start(m, 0, 3), 1);
	ck_assert_uint_eq(pr_stretch_start(m, 0, 7), 7); /* nothing held after rb */
	ck_assert_uint_eq(m->lsn[m->ls[rd]].mode, PR_READ);
}
END_TEST

START_TEST(lockset_conflict_modes)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	uint32_t r0 = ev(0, AVT_EV_RD_ACQUIRE, RW);
	ev(1, AVT_EV_START, 0);
	uint32_t r1 = ev(1, AVT_EV_RD_ACQUIRE, RW);
	ev(1, AVT_EV_RELEASE, RW);
	uint32_t w1 = ev(1, AVT_EV_ACQUIRE, LA);
	ev(1, AVT_EV_ACQUIRE, RW); /* as a writer, while T0 reads */
	uint32_t w2 = pr_tracebuf_nevents(tb) - 1;
	finish_model();
	ck_assert(!pr_ls_conflict(m, m->ls[r0], m->ls[r1]));
	ck_assert(!pr_ls_conflict(m, m->ls[r0], m->ls[w1]));
	ck_assert(pr_ls_conflict(m, m->ls[r0], m->ls[w2]));
}
END_TEST

/* PENELOPE's example: sync(l1) { A; sync(l2) { B; } sync(l3) { C; } } */
START_TEST(ah_penelope_example)
{
	struct pr_ah ah;
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_ACQUIRE, LA);  /* l1; A after this: pos 2 */
	ev(0, AVT_EV_ACQUIRE, LB);  /* l2; B: pos 3 */
	ev(0, AVT_EV_RELEASE, LB);
	ev(0, AVT_EV_ACQUIRE, LC);  /* l3; C: pos 5 */
	finish_model();
	uint32_t l1 = pr_obj_id(m, LA), l2 = pr_obj_id(m, LB), l3 = pr_obj_id(m, LC);

	ck_assert_int_eq(pr_ah_at(m, 0, 2, &ah), 0);
	ck_assert_uint_eq(ah.n, 1);
	ck_assert_uint_eq(ah.lock[0], l1);
	ck_assert_uint_eq(ah.off[1] - ah.off[0], 0);
	pr_ah_release(&ah);

	ck_assert_int_eq(pr_ah_at(m, 0, 3, &ah), 0);
	ck_assert_uint_eq(ah.n, 2);
	ck_assert_uint_eq(ah.off[1] - ah.off[0], 1);
	ck_assert_uint_eq(ah.hist[ah.off[0]], l2);
	ck_assert_uint_eq(ah.lock[1], l2);
	ck_assert_uint_eq(ah.off[2] - ah.off[1], 0);
	pr_ah_release(&ah);

	ck_assert_int_eq(pr_ah_at(m, 0, 5, &ah), 0);
	ck_assert_uint_eq(ah.n, 2);
	ck_assert_uint_eq(ah.lock[0], l1);
	ck_assert_uint_eq(ah.off[1] - ah.off[0], 2);
	ck_assert_uint_eq(ah.hist[ah.off[0]], l2);
	ck_assert_uint_eq(ah.hist[ah.off[0] + 1], l3);
	ck_assert_uint_eq(ah.lock[1], l3);
	ck_assert(pr_ah_holds(&ah, l3) && !pr_ah_holds(&ah, l2));
	pr_ah_release(&ah);

	ck_assert_int_eq(pr_ah_at(m, 0, 0, &ah), 0);
	ck_assert_uint_eq(ah.n, 0);
	pr_ah_release(&ah);
}
END_TEST

START_TEST(ah_compatibility)
{
	struct pr_ah t1, t2, t3, t4;
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(0, AVT_EV_CREATE, 2);
	ev(0, AVT_EV_CREATE, 3);
	/* T1 holds a, took and released b since */
	ev(1, AVT_EV_START, 0);
	ev(1, AVT_EV_ACQUIRE, LA);
	ev(1, AVT_EV_ACQUIRE, LB);
	ev(1, AVT_EV_RELEASE, LB);
	/* T2 holds b, took and released a since: cannot both be there */
	ev(2, AVT_EV_START, 0);
	ev(2, AVT_EV_ACQUIRE, LB);
	ev(2, AVT_EV_ACQUIRE, LA);
	ev(2, AVT_EV_RELEASE, LA);
	/* T3 holds c, took and released b since: fine with T1 */
	ev(3, AVT_EV_START, 0);
	ev(3, AVT_EV_ACQUIRE, LC);
	ev(3, AVT_EV_ACQUIRE, LB);
	ev(3, AVT_EV_RELEASE, LB);
	ev(3, AVT_EV_ACQUIRE, LA);
	finish_model();
	ck_assert_int_eq(pr_ah_at(m, 1, 4, &t1), 0);
	ck_assert_int_eq(pr_ah_at(m, 2, 4, &t2), 0);
	ck_assert_int_eq(pr_ah_at(m, 3, 4, &t3), 0);
	ck_assert_int_eq(pr_ah_at(m, 3, 5, &t4), 0);
	ck_assert(pr_ah_disjoint(&t1, &t2));
	ck_assert(!pr_ah_compatible(&t1, &t2));
	ck_assert(!pr_ah_compatible(&t2, &t1));
	ck_assert(pr_ah_compatible(&t1, &t3));
	ck_assert(pr_ah_disjoint(&t1, &t3));
	ck_assert(!pr_ah_disjoint(&t1, &t4)); /* both hold a */
	pr_ah_release(&t1);
	pr_ah_release(&t2);
	pr_ah_release(&t3);
	pr_ah_release(&t4);
}
END_TEST

START_TEST(cut_clock_drops_lock_edge)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(0, AVT_EV_ACQUIRE, LA);
	ev(0, AVT_EV_RELEASE, LA);  /* tindex 3 */
	ev(1, AVT_EV_START, 0);
	uint32_t a = ev(1, AVT_EV_ACQUIRE, LA);
	ev(1, AVT_EV_ACQUIRE, LB);
	finish_model();
	uint32_t c[2];
	pr_cut_clock(m, 1, 3, PR_NONE, c);
	ck_assert_uint_eq(c[0], 4);
	ck_assert_uint_eq(c[1], 3);
	pr_cut_clock(m, 1, 3, a, c);
	ck_assert_uint_eq(c[0], 2); /* only the create remains */
	ck_assert_uint_eq(c[1], 3);
}
END_TEST

/* A locked write -> another thread's read that saw it (reads-from, issue
 * 29): T1 writes X, then flag F; T2 reads F, then X.  _i 0: F's write is
 * locked: the reads are ordered after the writes.  _i 1: a plain write:
 * no edge (a data race).  _i 2: T1 overwrites F with a plain write
 * before T2 reads: T2 saw that one, no edge.  _i 3: the plain write is to
 * the byte next to F (same word): the edge stays.  _i 4: T2 reads F
 * before the locked write: no edge.  _i 5: T2 writes F after its read
 * (a load, then a store, where a compare-and-swap was needed): the read
 * is data for an update, no edge.  _i 6: T2's access of F is itself a
 * locked read-modify-write (an xchg that stores may drop what it read):
 * no edge. */
START_TEST(vc_locked_write_reads_from)
{
	enum { X = 0x6000, F = 0x6010 };
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(0, AVT_EV_CREATE, 2);
	ev(1, AVT_EV_START, 0);
	ev(2, AVT_EV_START, 0);
	uint32_t wx = ev(1, AVT_EV_WRITE, X);
	uint32_t rf0 = _i == 4 ? ev(2, AVT_EV_READ, F) : PR_NONE;
	uint32_t wf = _i == 1 ? ev(1, AVT_EV_WRITE, F) : ev2(1, AVT_EV_RMW, F, 0, AVT_F_ATOMIC);
	if (_i == 2 || _i == 3)
		ev(1, AVT_EV_WRITE, _i == 2 ? F : F + 1);
	uint32_t rf = _i == 4 ? rf0
			      : _i == 6 ? ev2(2, AVT_EV_RMW, F, 0, AVT_F_ATOMIC) : ev(2, AVT_EV_READ, F);
	uint32_t rx = ev(2, AVT_EV_READ, X);
	if (_i == 5)
		ev(2, AVT_EV_WRITE, F);
	finish_model();
	bool edge = _i == 0 || _i == 3;
	ck_assert_int_eq(pr_hb(m, wf, rf), edge);
	ck_assert_int_eq(pr_hb(m, wx, rx), edge);
	ck_assert_uint_eq(m->in_sync[rf], edge ? wf : PR_NONE);
	ck_assert(!pr_hb(m, rx, wx));
}
END_TEST

static bool steers_answer;
static unsigned steers_asked;

static bool steers_stub(void *ctx, uint16_t mod, uint64_t off, uint64_t addr, bool watched,
			uint64_t *stores, unsigned max, unsigned *nstores)
{
	(void)ctx, (void)mod, (void)off, (void)addr, (void)watched, (void)stores, (void)max;
	*nstores = 0;
	steers_asked++;
	return steers_answer;
}

/* With a steers question (predict_opts.read_steers): a read whose value
 * steers nothing (_i 0) takes no reads-from edge, one that may (_i 1)
 * does.  Asked once per site: the second poll at F's site is cached. */
START_TEST(vc_reads_from_only_reads_that_steer)
{
	enum { F = 0x6010 };
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(1, AVT_EV_START, 0);
	uint32_t wf = ev2(0, AVT_EV_RMW, F, 0, AVT_F_ATOMIC);
	uint32_t r1 = evx(1, AVT_EV_READ, F, 0, 0, 0x900, 0);
	uint32_t r2 = evx(1, AVT_EV_READ, F, 0, 0, 0x900, 0);
	finish_trace();
	steers_answer = _i == 1;
	steers_asked = 0;
	m = pr_model_new_steers(tr, steers_stub, NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pr_hb(m, wf, r1), _i == 1);
	ck_assert_int_eq(pr_hb(m, wf, r2), _i == 1);
	ck_assert_uint_eq(steers_asked, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_model");
	TCase *vc = tcase_create("vector_clocks");
	tcase_add_checked_fixture(vc, setup, teardown);
	tcase_add_test(vc, vc_fork_join_lock);
	tcase_add_test(vc, vc_cond_signal_wake);
	tcase_add_test(vc, vc_barrier_sem_trylock);
	tcase_add_test(vc, vc_rwlock_readers);
	tcase_add_test(vc, vc_snapshots_shared);
	tcase_add_test(vc, model_rejects_bad_tindex);
	tcase_add_test(vc, cut_clock_drops_lock_edge);
	tcase_add_loop_test(vc, vc_locked_write_reads_from, 0, 7);
	tcase_add_loop_test(vc, vc_reads_from_only_reads_that_steer, 0, 2);
	suite_add_tcase(s, vc);
	TCase *ls = tcase_create("locksets");
	tcase_add_checked_fixture(ls, setup, teardown);
	tcase_add_test(ls, lockset_nested_and_not);
	tcase_add_test(ls, lockset_conflict_modes);
	tcase_add_test(ls, ah_penelope_example);
	tcase_add_test(ls, ah_compatibility);
	suite_add_tcase(s, ls);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
