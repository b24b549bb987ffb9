/*
 * Schedule synthesis: the exact steps for a check-then-act trace and a
 * lock-order inversion, and every schedule checked by simulating replay's
 * rules: each thread runs its recorded events in order, a thread must
 * exist to run, never acquires a lock another thread holds (except the
 * final request of a deadlock, after which nobody can move), never joins
 * a live thread, never wakes from a cond wait nobody signalled, and a
 * failed trylock finds its lock held.  Synthetic traces are checked the
 * same way, prediction by prediction, with accesses woven in for PENELOPE.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/tracebuf.h"

enum { LM = 0x1000, LN = 0x1040, LA = 0x1080, LB = 0x10c0, LZ = 0x1100, CV = 0x2000 };
enum { SA = 0x400, SB = 0x480, SC = 0x500 };

#include "predict_test.h"

static void predict(void)
{
	struct predict_opts o = { .deadlocks = true, .sidetrack = true };
	finish_predict(&o);
}

/* ---- the replay-rule simulator ---- */

#define SIM_MAX 64

struct sim {
	const struct trace *t;
	uint32_t nthr;
	const struct avt_event **ev[SIM_MAX];
	uint32_t nev[SIM_MAX], next[SIM_MAX];
	bool created[SIM_MAX], exited[SIM_MAX];
	uint64_t waited[SIM_MAX];      /* step count at the thread's last wait */
	uint64_t laddr[256];
	uint32_t owner[256], readers[256];
	uint64_t caddr[64], csig[64];  /* cond: step count at its last signal */
	size_t nl, nc;
	uint64_t clock;                /* events run so far */
	uint64_t *order;               /* seqs in the order run */
	char why[256];
};

static uint32_t lock_slot(struct sim *s, uint64_t a)
{
	for (size_t i = 0; i < s->nl; i++)
		if (s->laddr[i] == a)
			return (uint32_t)i;
	/* plain tests in the simulator: each ck_assert records a mark point */
	if (s->nl >= 256)
		ck_abort_msg("too many locks for the simulator");
	s->laddr[s->nl] = a;
	s->owner[s->nl] = s->readers[s->nl] = 0;
	return (uint32_t)s->nl++;
}

static uint32_t cond_slot(struct sim *s, uint64_t a)
{
	for (size_t i = 0; i < s->nc; i++)
		if (s->caddr[i] == a)
			return (uint32_t)i;
	if (s->nc >= 64)
		ck_abort_msg("too many conds for the simulator");
	s->caddr[s->nc] = a;
	s->csig[s->nc] = 0;
	return (uint32_t)s->nc++;
}

static void sim_init(struct sim *s, const struct trace *t)
{
	memset(s, 0, sizeof *s);
	s->t = t;
	for (size_t i = 0; i < t->nev; i++) {
		uint32_t u = t->ev[i].thread;
		if (u >= SIM_MAX)
			ck_abort_msg("too many threads for the simulator");
		if (u + 1 > s->nthr)
			s->nthr = u + 1;
		s->nev[u]++;
	}
	for (uint32_t u = 0; u < s->nthr; u++) {
		s->ev[u] = calloc(s->nev[u] + 1, sizeof *s->ev[u]);
		s->nev[u] = 0;
	}
	for (size_t i = 0; i < t->nev; i++)
		s->ev[t->ev[i].thread][s->nev[t->ev[i].thread]++] = &t->ev[i];
	s->created[0] = true;
	s->order = calloc(t->nev + 1, sizeof *s->order);
}

static void sim_free(struct sim *s)
{
	for (uint32_t u = 0; u < s->nthr; u++)
		free(s->ev[u]);
	free(s->order);
}

/* Held by another thread in a mode that excludes an acquisition of `excl`. */
static bool held_against(struct sim *s, uint64_t addr, uint32_t u, bool excl)
{
	uint32_t l = lock_slot(s, addr);
	if (s->owner[l] && s->owner[l] != u + 1)
		return true;
	return excl && s->readers[l] > 0;
}

static bool acquire_blocked(struct sim *s, const struct avt_event *e, uint32_t u)
{
	if (!avt_kind_is_acquire(e->kind) || (e->flags & AVT_F_RECURSIVE))
		return false;
	return held_against(s, e->obj, u, e->kind != AVT_EV_RD_ACQUIRE);
}

/* Why thread u's next event cannot run now, or NULL. */
static const char *cannot(struct sim *s, uint32_t u)
{
	if (s->next[u] >= s->nev[u])
		return "has no events left";
	if (!s->created[u])
		return "does not exist yet";
	const struct avt_event *e = s->ev[u][s->next[u]];
	if (acquire_blocked(s, e, u))
		return "acquires a lock another thread holds";
	if (e->kind == AVT_EV_TRYLOCK_FAIL && !held_against(s, e->obj, u, true))
		return "fails a trylock on a free lock";
	if (e->kind == AVT_EV_JOIN && (e->obj >= SIM_MAX || !s->exited[e->obj]))
		return "joins a live thread";
	if ((e->flags & AVT_F_COND_WAKE) && !(e->flags & AVT_F_TIMED_OUT) &&
	    s->csig[cond_slot(s, e->obj2)] <= s->waited[u])
		return "wakes from a wait nobody signalled";
	return NULL;
}

static void apply(struct sim *s, uint32_t u)
{
	const struct avt_event *e = s->ev[u][s->next[u]++];
	s->order[s->clock++] = e->seq;
	if (avt_kind_is_acquire(e->kind) && !(e->flags & AVT_F_RECURSIVE)) {
		uint32_t l = lock_slot(s, e->obj);
		if (e->kind == AVT_EV_RD_ACQUIRE)
			s->readers[l]++;
		else
			s->owner[l] = u + 1;
	} else if ((e->kind == AVT_EV_RELEASE && !(e->flags & AVT_F_RECURSIVE)) ||
		   e->kind == AVT_EV_WAIT) {
		uint32_t l = lock_slot(s, e->kind == AVT_EV_WAIT ? e->obj2 : e->obj);
		if (s->owner[l] == u + 1)
			s->owner[l] = 0;
		else if (s->readers[l])
			s->readers[l]--;
		if (e->kind == AVT_EV_WAIT)
			s->waited[u] = s->clock;
	} else if (e->kind == AVT_EV_SIGNAL || e->kind == AVT_EV_BROADCAST) {
		s->csig[cond_slot(s, e->obj)] = s->clock;
	} else if (e->kind == AVT_EV_CREATE && e->obj < SIM_MAX) {
		s->created[e->obj] = true;
	} else if (e->kind == AVT_EV_EXIT) {
		s->exited[u] = true;
	}
}

/* Runs schedule sch.  Returns 1 if it runs to `free`, 2 if its last step is
 * a request that deadlocks (only allowed if may_deadlock), 0 with s->why
 * set otherwise. */
static int simulate(struct sim *s, const struct schedule *sch, bool may_deadlock)
{
	for (size_t i = 0; i < sch->nsteps; i++) {
		uint32_t u = sch->steps[i].thread;
		if (u >= SIM_MAX) {
			snprintf(s->why, sizeof s->why, "step %zu: no thread T%u", i + 1, u);
			return 0;
		}
		for (uint32_t k = 0; k < sch->steps[i].count; k++) {
			const char *no = cannot(s, u);
			if (no && may_deadlock && i + 1 == sch->nsteps && sch->steps[i].count == 1 &&
			    !strcmp(no, "acquires a lock another thread holds")) {
				for (uint32_t v = 0; v < s->nthr; v++)
					if (!cannot(s, v)) {
						snprintf(s->why, sizeof s->why,
							 "final request of T%u but T%u can run", u, v);
						return 0;
					}
				return 2;
			}
			if (no) {
				snprintf(s->why, sizeof s->why, "step %zu: T%u %s", i + 1, u, no);
				return 0;
			}
			apply(s, u);
		}
	}
	if (!sch->has_free) {
		snprintf(s->why, sizeof s->why, "no free at the end");
		return 0;
	}
	return 1;
}

static int64_t pos(const struct sim *s, uint64_t seq)
{
	for (uint64_t i = 0; i < s->clock; i++)
		if (s->order[i] == seq)
			return (int64_t)i;
	return -1;
}

static void assert_steps(const struct schedule *s, const uint32_t (*want)[2], size_t n)
{
	ck_assert_uint_eq(s->nsteps, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(s->steps[i].thread, want[i][0]);
		ck_assert_uint_eq(s->steps[i].count, want[i][1]);
	}
	ck_assert(s->has_free);
}

/* The violation's events run in the predicted order, and T2's critical
 * section (from e2 to its release) lies between T1's two. */
static void assert_atomicity_order(struct sim *s, const struct prediction *p)
{
	int64_t e1 = pos(s, p->events[0]), e2 = pos(s, p->events[1]), e3 = pos(s, p->events[2]);
	ck_assert_int_ge(e1, 0);
	ck_assert_int_gt(e2, e1);
	ck_assert_int_gt(e3, e2);
	/* after e3 nothing of the schedule remains but free */
	ck_assert_int_eq(e3, (int64_t)s->clock - 1);
	/* T1 released the lock before e2 and T2 released it before e3 */
	uint32_t t1 = s->t->ev[p->events[0]].thread, t2 = s->t->ev[p->events[1]].thread;
	bool rel1 = false, rel2 = false;
	for (int64_t i = e1 + 1; i < e3; i++) {
		const struct avt_event *e = &s->t->ev[s->order[i]];
		if (e->obj != p->objs[0] || (e->kind != AVT_EV_RELEASE && e->kind != AVT_EV_WAIT))
			continue;
		if (e->thread == t1 && i < e2)
			rel1 = true;
		if (e->thread == t2 && i > e2)
			rel2 = true;
	}
	ck_assert(rel1 && rel2);
}

/* PENELOPE: e1, then e', then e2 if the schedule runs it at all (else
 * the forced part ends with e' and free). */
static void assert_access_order(struct sim *s, const struct prediction *p)
{
	int64_t e1 = pos(s, p->events[0]), f = pos(s, p->events[1]), e2 = pos(s, p->events[2]);
	ck_assert_int_ge(e1, 0);
	ck_assert_int_gt(f, e1);
	ck_assert(e2 < 0 || e2 > f);
}

static void check_all(void)
{
	for (size_t i = 0; i < ps.n; i++) {
		struct sim s;
		const struct prediction *p = &ps.p[i];
		bool dl = !strcmp(p->detector, "deadlock");
		sim_init(&s, tr);
		int rc = simulate(&s, p->sched, dl);
		if (!rc)
			ck_abort_msg("prediction %u (%s %s): %s", p->id, p->detector, p->pattern,
				     s.why);
		if (!strcmp(p->detector, "penelope"))
			assert_access_order(&s, p);
		else if (!dl)
			assert_atomicity_order(&s, p);
		ck_assert_uint_eq(p->context_switches, p->sched->nsteps - 1);
		sim_free(&s);
	}
}

/* tests/targets/checkthenact.c */
START_TEST(check_then_act_steps)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	const struct prediction *p = &ps.p[0];
	ck_assert_str_eq(p->detector, "sidetrack");
	ck_assert_str_eq(p->pattern, "after-window");
	ck_assert_uint_eq(p->id, 1);
	static const uint32_t want[][2] = { { 0, 3 }, { 1, 3 }, { 2, 3 }, { 1, 1 } };
	assert_steps(p->sched, want, 4);
	ck_assert_uint_eq(p->context_switches, 3);
	ck_assert_uint_eq(p->nevents, 3);
	ck_assert_uint_eq(p->events[0], 4);
	ck_assert_uint_eq(p->events[1], 9);
	ck_assert_uint_eq(p->events[2], 6);
	ck_assert_uint_eq(p->objs[0], LM);
	ck_assert_uint_eq(p->sched->ncomments, 1);
	ck_assert_str_eq(p->sched->comments[0],
			 "1: sidetrack after-window \u2014 T1 acquires 0x1000 at app+0x400, "
			 "T2 acquires 0x1000 at app+0x500, T1 acquires 0x1000 at app+0x480");
	ck_assert_ptr_nonnull(strstr(p->summary, "app+0x400"));
	check_all();
}
END_TEST

/* tests/targets/lockorder.c */
START_TEST(lock_order_inversion_steps)
{
	spawn(2);
	start(1);
	acq(1, LA, SA);
	acq(1, LB, SB);
	rel(1, LB, SB);
	rel(1, LA, SA);
	start(2);
	acq(2, LB, SC);
	acq(2, LA, SC + 0x10);
	rel(2, LA, SC + 0x10);
	rel(2, LB, SC);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	const struct prediction *p = &ps.p[0];
	ck_assert_str_eq(p->detector, "deadlock");
	ck_assert_str_eq(p->pattern, "cycle");
	/* T1 takes a, T2 takes b, T1 asks for b: nobody can move */
	static const uint32_t want[][2] = { { 0, 3 }, { 1, 2 }, { 2, 2 }, { 1, 1 } };
	assert_steps(p->sched, want, 4);
	ck_assert_uint_eq(p->nobjs, 2);
	ck_assert_uint_eq(p->objs[0], LA);
	ck_assert_uint_eq(p->objs[1], LB);
	struct sim s;
	sim_init(&s, tr);
	ck_assert_int_eq(simulate(&s, p->sched, true), 2);
	sim_free(&s);
	check_all();
}
END_TEST

/* The same inversion recorded the other way round: T2 nests b, a first.
 * T2's hold runs first, so T2's request ends the schedule. */
START_TEST(lock_order_reversed_steps)
{
	spawn(2);
	start(2);
	uint32_t h2 = acq(2, LB, SC), q2 = acq(2, LA, SC + 0x10);
	rel(2, LA, SC + 0x10);
	rel(2, LB, SC);
	start(1);
	uint32_t h1 = acq(1, LA, SA), q1 = acq(1, LB, SB);
	rel(1, LB, SB);
	rel(1, LA, SA);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	const struct prediction *p = &ps.p[0];
	static const uint32_t want[][2] = { { 0, 3 }, { 2, 2 }, { 1, 2 }, { 2, 1 } };
	assert_steps(p->sched, want, 4);
	ck_assert_uint_eq(p->threads[0], 2);
	ck_assert_uint_eq(p->threads[1], 1);
	ck_assert_uint_eq(p->events[0], h2);
	ck_assert_uint_eq(p->events[1], h1);
	ck_assert_uint_eq(p->events[2], q2);
	ck_assert_uint_eq(p->events[3], q1);
	ck_assert_uint_eq(p->objs[0], LB);
	check_all();
}
END_TEST

/* A third thread that could still run: the schedule stops at the cut and
 * lets `free` find the deadlock. */
START_TEST(lock_order_with_bystander)
{
	spawn(3);
	start(1);
	acq(1, LA, SA);
	acq(1, LB, SB);
	rel(1, LB, SB);
	rel(1, LA, SA);
	start(2);
	acq(2, LB, SC);
	acq(2, LA, SC + 0x10);
	rel(2, LA, SC + 0x10);
	rel(2, LB, SC);
	start(3);
	acq(3, LZ, SC + 0x40);
	rel(3, LZ, SC + 0x40);
	finish_and_join(3);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	const struct schedule *s = ps.p[0].sched;
	ck_assert_uint_eq(s->steps[s->nsteps - 1].thread, 2);
	check_all();
}
END_TEST

START_TEST(before_window_schedule)
{
	spawn(2);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "before-window");
	/* region I keeps T2's start where it was recorded; T2's section then
	 * moves after T1's first one */
	static const uint32_t want[][2] = { { 0, 3 }, { 2, 1 }, { 1, 3 }, { 2, 2 }, { 1, 1 } };
	assert_steps(ps.p[0].sched, want, 5);
	check_all();
}
END_TEST

START_TEST(in_window_schedule)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	acq(1, LM, SB);
	rel(1, LM, SB);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "in-window");
	check_all();
}
END_TEST

/* After region I the current thread keeps running: T1's window (lock n)
 * and T2's way to its section (lock k) were recorded interleaved, but need
 * not be run so. */
START_TEST(few_switches_after_region1)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	start(2);
	acq(2, LA, 0x600);
	rel(2, LA, 0x600);
	acq(1, LN, 0x640);
	rel(1, LN, 0x640);
	acq(2, LB, 0x680);
	rel(2, LB, 0x680);
	acq(1, LM, SB);
	rel(1, LM, SB);
	acq(2, LM, SC);
	rel(2, LM, SC);
	finish_and_join(2);
	predict();
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "after-window");
	static const uint32_t want[][2] = { { 0, 3 }, { 1, 5 }, { 2, 7 }, { 1, 1 } };
	assert_steps(ps.p[0].sched, want, 4);
	check_all();
}
END_TEST

/* The culprit's section needs a cond wake-up: the signaller must run
 * first in the new schedule too. */
START_TEST(cond_edges_respected)
{
	spawn(3);
	start(2);
	acq(2, LM, 0x300);
	evx(2, AVT_EV_WAIT, CV, LM, 0, 0x310, 0);
	start(3);
	acq(3, LM, 0x320);
	ev(3, AVT_EV_SIGNAL, CV, 0x330);
	rel(3, LM, 0x320);
	evx(2, AVT_EV_ACQUIRE, LM, CV, 0, 0x310, AVT_F_COND_WAKE);
	rel(2, LM, 0x340);
	acq(2, LM, SC);
	rel(2, LM, SC);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	finish_and_join(3);
	predict();
	ck_assert_uint_ge(ps.n, 1);
	check_all();
}
END_TEST

/* PECAN's outermost lock: T2's section sits inside lock n, which T1's
 * window also takes; n must be taken by T2 after T1's use of it. */
START_TEST(outer_lock_moves_with_culprit)
{
	spawn(2);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LN, 0x600);
	rel(1, LN, 0x600);
	acq(1, LM, SB);
	rel(1, LM, SB);
	start(2);
	acq(2, LN, 0x640);
	acq(2, LM, SC);
	rel(2, LM, SC);
	rel(2, LN, 0x640);
	finish_and_join(2);
	predict();
	ck_assert_uint_ge(ps.n, 1);
	check_all();
}
END_TEST

START_TEST(synthetic_schedules_feasible)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct predict_opts o = { .deadlocks = true, .sidetrack = true };
		pr_tracebuf_free(tb);
		tb = NULL;
		trace_free(tr);
		tr = predict_synthetic_trace(20000, 6, 8, seed);
		ck_assert_ptr_nonnull(tr);
		prediction_set_release(&ps);
		ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
		ck_assert_uint_gt(ps.n, 0);
		check_all();
	}
}
END_TEST

/* Synthetic traces with accesses woven in (as bench/predict_bench.c
 * does): each critical section reads and writes its lock's variable, and
 * after some releases a thread reads or writes one of four unprotected
 * globals.  Every PENELOPE schedule must follow replay's rules too. */
static struct trace *with_accesses(struct trace *t)
{
	struct pr_tracebuf *b = pr_tracebuf_new();
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pr_tracebuf_module(b, 0, "/bin/app"), 0);
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		uint64_t h = e->seq * 0x9e3779b97f4a7c15ULL >> 40, v = 0x200000 + (e->obj & 0xffff);
		ck_assert(pr_tracebuf_event(b, e->thread, e->kind, e->obj, e->obj2, e->site_mod,
					    e->site_off, e->flags) != UINT64_MAX);
		if (avt_kind_is_acquire(e->kind)) {
			pr_tracebuf_event(b, e->thread, AVT_EV_READ, v, 0, 0, e->site_off + 0x1000, 0);
			pr_tracebuf_event(b, e->thread, AVT_EV_WRITE, v, 0, 0, e->site_off + 0x1008, 0);
		} else if (e->kind == AVT_EV_RELEASE && h % 4 == 0) {
			enum avt_kind k = h % 8 ? AVT_EV_READ : AVT_EV_WRITE;
			pr_tracebuf_event(b, e->thread, k, 0x300000 + h / 8 % 4 * 8, 0, 0,
					  0x9000 + h / 8 % 4 * 16 + (k == AVT_EV_WRITE) * 8, 0);
		}
	}
	trace_free(t);
	struct trace *r = pr_tracebuf_finish(b);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* Two penelope predictions of one bug: pattern, sites and variable. */
static bool same_bug(const struct prediction *a, const struct prediction *b)
{
	if (strcmp(a->detector, "penelope") || strcmp(b->detector, "penelope") ||
	    strcmp(a->pattern, b->pattern) || a->objs[0] != b->objs[0])
		return false;
	for (unsigned k = 0; k < 3; k++) {
		const struct avt_event *x = &tr->ev[a->events[k]], *y = &tr->ev[b->events[k]];
		if (x->site_mod != y->site_mod || x->site_off != y->site_off)
			return false;
	}
	return true;
}

START_TEST(synthetic_access_schedules_feasible)
{
	size_t npen = 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true };
		pr_tracebuf_free(tb);
		tb = NULL;
		trace_free(tr);
		tr = with_accesses(predict_synthetic_trace(20000, 6, 8, seed));
		prediction_set_release(&ps);
		ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
		for (size_t i = 0; i < ps.n; i++) {
			npen += !strcmp(ps.p[i].detector, "penelope");
			for (size_t j = 0; j < i; j++)
				ck_assert_msg(!same_bug(&ps.p[i], &ps.p[j]),
					      "predictions %u and %u are one bug", ps.p[i].id, ps.p[j].id);
		}
		check_all();
	}
	ck_assert_uint_gt(npen, 0);
}
END_TEST

/* tests/targets/acc_setters.c: three setters write a then b, a checker
 * reads a then b.  The race "the checker reads b before T3 writes it"
 * shows nothing if T1 and T2 wrote b before: their region-I writes of the
 * pattern's variables wait until after the pattern (spare_bystanders),
 * and so does the atomic-set-8 instance with T3. */
START_TEST(bystander_writes_after_pattern)
{
	enum { VA = 0x3000, VB = 0x3040 };
	spawn(4);
	for (uint32_t t = 1; t <= 3; t++) {
		start(t);
		ev(t, AVT_EV_WRITE, VA, SA);
		ev(t, AVT_EV_WRITE, VB, SB);
	}
	start(4);
	ev(4, AVT_EV_READ, VA, SC);
	ev(4, AVT_EV_READ, VB, SC + 8);
	finish_and_join(4);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true, .pecan = true };
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	size_t checked = 0;
	for (size_t i = 0; i < ps.n; i++) {
		const struct prediction *p = &ps.p[i];
		bool reads_b = false, setter = false;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct avt_event *e = &tr->ev[p->events[k]];
			reads_b |= e->thread == 4 && e->kind == AVT_EV_READ && e->obj == VB;
			setter |= e->thread >= 1 && e->thread <= 3;
		}
		if (!reads_b || !setter)
			continue;
		/* the schedule's prefix: every step before the checker's
		 * read of b; no setter outside the pattern may have written b */
		uint32_t made[8] = { 0 }, pattern_setter = 0;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct avt_event *e = &tr->ev[p->events[k]];
			if (e->thread >= 1 && e->thread <= 3)
				pattern_setter = e->thread;
		}
		for (size_t st = 0; st < p->sched->nsteps; st++)
			if (p->sched->steps[st].kind == SCHED_RUN && p->sched->steps[st].thread < 8)
				made[p->sched->steps[st].thread] += p->sched->steps[st].count;
		for (uint32_t t = 1; t <= 3; t++)
			if (t != pattern_setter)
				ck_assert_msg(made[t] < 3, "prediction %u (%s %s): T%u writes b before the pattern (%u events)",
					      p->id, p->detector, p->pattern, t, made[t]);
		checked++;
	}
	ck_assert_uint_ge(checked, 2);
	for (size_t i = 0; i < ps.n; i++) { /* each one feasible */
		struct sim sm;
		sim_init(&sm, tr);
		ck_assert_msg(simulate(&sm, ps.p[i].sched, false), "prediction %u (%s %s): %s", ps.p[i].id,
			      ps.p[i].detector, ps.p[i].pattern, sm.why);
		sim_free(&sm);
	}
}
END_TEST

/* tests/targets/explore_three.c: three legs of a relay, each a critical
 * section reading and writing the stage, recorded T1, T2, T3.  The order
 * detector predicts T1's read taking its value from T2's write and from
 * T3's (the second thread writing after it: another write of the same
 * code), the furthest first (T2's read from T3's write is the first of
 * these again, by its sites: one prediction); each schedule runs the writer's section
 * before the reader's, keeps every other read's writer (T3 after T2), and
 * replays under the simulator's rules. */
START_TEST(order_relay)
{
	enum { VS = 0x3080 };
	spawn(3);
	for (uint32_t t = 1; t <= 3; t++) {
		start(t);
		acq(t, LM, SA);
		ev(t, AVT_EV_READ, VS, SB);
		ev(t, AVT_EV_WRITE, VS, SC);
		rel(t, LM, SA);
	}
	finish_and_join(3);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true, .pecan = true,
				  .order = true };
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	/* T1 from T2 and T1 from T3; T2 from T3 is T1 from T2's code again */
	ck_assert_uint_eq(ps.n, 2);
	uint32_t first_writer = 0;
	for (size_t i = 0; i < ps.n; i++) {
		const struct prediction *p = &ps.p[i];
		ck_assert_str_eq(p->detector, "order");
		ck_assert_str_eq(p->pattern, "reads-from");
		const struct avt_event *w = &tr->ev[p->events[0]], *r = &tr->ev[p->events[1]];
		ck_assert_uint_eq(w->kind, AVT_EV_WRITE);
		ck_assert_uint_eq(r->kind, AVT_EV_READ);
		if (i == 0)
			first_writer = w->thread;
		struct sim sm;
		sim_init(&sm, tr);
		ck_assert_msg(simulate(&sm, p->sched, false), "prediction %u: %s", p->id, sm.why);
		/* the write ran, the read after it, and the read is the last
		 * event of the schedule */
		int64_t pw = pos(&sm, p->events[0]), pr = pos(&sm, p->events[1]);
		ck_assert_int_ge(pw, 0);
		ck_assert_int_gt(pr, pw);
		ck_assert_int_eq(pr, (int64_t)sm.clock - 1);
		/* every read but the moved one saw what it saw when recorded:
		 * T3's read after T2's write */
		if (w->thread == 3) {
			bool t2_before_t3 = false;
			for (uint64_t k = 0; k < sm.clock; k++) {
				const struct avt_event *e = &tr->ev[sm.order[k]];
				if (e->thread == 2 && e->kind == AVT_EV_WRITE)
					t2_before_t3 = true;
				if (e->thread == 3 && e->kind == AVT_EV_READ)
					ck_assert_msg(t2_before_t3, "T3 read the stage before T2 wrote it");
			}
		}
		sim_free(&sm);
	}
	ck_assert_uint_eq(first_writer, 3); /* the reader moved furthest first */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_synth");
	TCase *c = tcase_create("schedules");
	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, check_then_act_steps);
	tcase_add_test(c, lock_order_inversion_steps);
	tcase_add_test(c, lock_order_reversed_steps);
	tcase_add_test(c, lock_order_with_bystander);
	tcase_add_test(c, before_window_schedule);
	tcase_add_test(c, in_window_schedule);
	tcase_add_test(c, few_switches_after_region1);
	tcase_add_test(c, cond_edges_respected);
	tcase_add_test(c, outer_lock_moves_with_culprit);
	tcase_add_test(c, synthetic_schedules_feasible);
	tcase_add_test(c, synthetic_access_schedules_feasible);
	tcase_add_test(c, bystander_writes_after_pattern);
	tcase_add_test(c, order_relay);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
