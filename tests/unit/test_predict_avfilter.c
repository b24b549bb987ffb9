/*
 * AVFilter (predict/avfilter.h) on hand-built traces and schedules: each
 * of the five cases of Lemmas 1 and 2 marks a schedule that breaks its
 * read-after-write relation and leaves alone a close variant that does
 * not (the read keeps its writer, or no branch follows it); the pattern's
 * own reads never mark; a schedule that keeps every read's writer is
 * never marked, checked on the recorded order and on random traces and
 * schedules against a plain reference; deadlocks are not judged; a second
 * call replaces the first call's marks.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "predict/avfilter.h"
#include "predict/model.h"
#include "predict/predict.h"
#include "predict/tracebuf.h"

enum { X = 0x5000, Y = 0x5008, Z = 0x5010, W = 0x5018, L = 0x1000 };


#define PREDICT_TEST_OWN_SITES /* one site per event */
#include "predict_test.h"

static uint32_t ev(uint32_t t, enum avt_kind k, uint64_t obj)
{
	return evx(t, k, obj, 0, 0, 0x400 + pr_tracebuf_nevents(tb) * 8, 0);
}

static uint32_t rd(uint32_t t, uint64_t v)
{
	return ev(t, AVT_EV_READ, v);
}

static uint32_t wr(uint32_t t, uint64_t v)
{
	return ev(t, AVT_EV_WRITE, v);
}

/* T0 starts and creates T1 and T2: three events of T0. */
static void spawn(void)
{
	ev(0, AVT_EV_START, UINT32_MAX);
	ev(0, AVT_EV_CREATE, 1);
	ev(0, AVT_EV_CREATE, 2);
}

static void start(uint32_t t)
{
	ev(t, AVT_EV_START, 0);
}

/* One prediction of detector det with events a, b, c and the schedule
 * given as (thread, count) pairs ended by UINT32_MAX, then free. */
static struct prediction *pred(const char *det, uint32_t a, uint32_t b, uint32_t c, ...)
{
	va_list ap;
	if (!ps.p) {
		ps.p = calloc(4, sizeof *ps.p);
		ck_assert_ptr_nonnull(ps.p);
	}
	struct prediction *p = &ps.p[ps.n++];
	p->id = (unsigned)ps.n;
	p->detector = det;
	p->pattern = "RWW";
	p->events[0] = a;
	p->events[1] = b;
	p->events[2] = c;
	p->nevents = 3;
	p->sched = schedule_new();
	ck_assert_ptr_nonnull(p->sched);
	va_start(ap, c);
	for (uint32_t t; (t = va_arg(ap, uint32_t)) != UINT32_MAX;)
		ck_assert_int_eq(schedule_append_run(p->sched, t, va_arg(ap, uint32_t)), 0);
	va_end(ap);
	p->sched->has_free = 1;
	return p;
}

static bool br_yes(void *ctx, const struct pr_model *mm, uint32_t e)
{
	return true;
}

/* A branch only right before event *(uint32_t *)ctx. */
static bool br_at(void *ctx, const struct pr_model *mm, uint32_t e)
{
	return e == *(uint32_t *)ctx;
}

static void expect_flag(const struct prediction *p, const char *kase, const char *read)
{
	ck_assert(p->filtered);
	ck_assert_ptr_nonnull(p->filter_why);
	ck_assert_msg(strstr(p->filter_why, kase) && strstr(p->filter_why, read),
		      "why: %s (want '%s', '%s')", p->filter_why, kase, read);
}

static void expect_kept(const struct prediction *p)
{
	ck_assert_msg(!p->filtered, "flagged: %s", p->filter_why ? p->filter_why : "(null)");
	ck_assert_ptr_null(p->filter_why);
}

/* ---- Lemma 1: a_j recorded after a_k ---- */

/* Figure 2: T2 reads y (written by T1 after the window) before a_j; the
 * schedule runs that read before T1's a_k, so it loses the write. */
START_TEST(case1_flag)
{
	spawn();
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	uint32_t w = wr(1, Y);
	start(2);
	uint32_t r = rd(2, Y), aj = wr(2, X);
	ck_assert_uint_eq(w, 6);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_flag(p, "case 1 (Lemma 1 (1))", "at seq 8 ");
	ck_assert_msg(strstr(p->filter_why, "loses its writer seq 6 (T1) and reads the initial value"),
		      "%s", p->filter_why);
	ck_assert_uint_eq(r, 8);
}
END_TEST

/* T2's read recorded after a_k reads a write T1 made before a_i: the
 * schedule keeps it. */
START_TEST(case1_kept)
{
	spawn();
	start(1);
	wr(1, Y);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	start(2);
	rd(2, Y);
	uint32_t aj = wr(2, X);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 3, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* ---- where the changed read's value goes (pr_avfilter_use) ---- */

/* The oracle's answers by site offset; other sites may steer. */
static struct {
	uint64_t off;
	bool steers;
	unsigned nstore;
	uint64_t store[2];
} oracle[4];
static unsigned noracle, nasked;

static bool oracle_steers(void *ctx, uint16_t mod, uint64_t off, uint64_t addr, bool watched,
			  uint64_t *stores, unsigned max, unsigned *nstores)
{
	nasked++;
	*nstores = 0;
	for (unsigned i = 0; i < noracle; i++)
		if (oracle[i].off == off) {
			ck_assert_uint_le(oracle[i].nstore, max);
			memcpy(stores, oracle[i].store, oracle[i].nstore * sizeof *stores);
			*nstores = oracle[i].nstore;
			return oracle[i].steers;
		}
	return true;
}

static void answer(uint32_t e, bool steers, unsigned nstore, uint64_t s0)
{
	oracle[noracle].off = pr_ev(m, e)->site_off;
	oracle[noracle].steers = steers;
	oracle[noracle].nstore = nstore;
	oracle[noracle++].store[0] = s0;
}

/* case1_flag's trace and schedule; T0 then reads Z and Y (Y's later
 * readers for _i 1..): _i 0, T2's read of y only feeds registers; 1, it
 * steers; 2, it is stored to z, which T0's read of z uses to steer; 3, it
 * is stored back to y, whose reads (T2's, T0's) only ever do that (the
 * `hot = hot + 1` of explore_rare); 4, it is stored to w, which no
 * recorded access reads. */
START_TEST(value_use)
{
	static const bool flagged[] = { false, true, true, false, true };
	spawn();
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	wr(1, Y);
	start(2);
	uint32_t r = rd(2, Y), aj = wr(2, X);
	uint32_t rz = rd(0, Z), ry = rd(0, Y);
	finish_model();
	noracle = nasked = 0;
	answer(r, _i == 1, _i >= 2, _i == 2 ? Z : _i == 3 ? Y : W);
	answer(rz, true, 0, 0);
	answer(ry, false, 1, Y);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_use(m, ps.p, ps.n, NULL, NULL, oracle_steers, NULL), 0);
	if (flagged[_i])
		expect_flag(p, "case 1 (Lemma 1 (1))", "at seq 8 ");
	else
		expect_kept(p);
	ck_assert_uint_ge(nasked, 1);
}
END_TEST

/* T2 reads y inside the window from T1's write after a_i; with T1 cut at
 * a_i, the read runs before that write.  Cut after the write, it keeps
 * it (case2_kept). */
static uint32_t case2_trace(uint32_t *ai, uint32_t *aj, uint32_t *ak)
{
	spawn();
	start(1);
	*ai = rd(1, X);
	wr(1, Y);
	start(2);
	uint32_t r = rd(2, Y);
	*ak = wr(1, X);
	*aj = wr(2, X);
	finish_model();
	return r;
}

START_TEST(case2_flag)
{
	uint32_t ai, aj, ak;
	case2_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_flag(p, "case 2 (Lemma 1 (2))", "at seq 7 ");
}
END_TEST

START_TEST(case2_kept)
{
	uint32_t ai, aj, ak;
	case2_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 3, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* T1 reads y inside its window, then T2 writes y before a_j: moved into
 * the window, T2's write is what the read sees.  Critical only if a
 * branch may follow the read before a_k. */
static uint32_t case3_trace(uint32_t *ai, uint32_t *aj, uint32_t *ak)
{
	spawn();
	start(1);
	*ai = rd(1, X);
	uint32_t r = rd(1, Y);
	*ak = wr(1, X);
	start(2);
	wr(2, Y);
	*aj = wr(2, X);
	finish_model();
	return r;
}

START_TEST(case3_flag)
{
	uint32_t ai, aj, ak;
	case3_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_at, &ak), 0);
	expect_flag(p, "case 3 (Lemma 1 (3))", "at seq 5 ");
	ck_assert_msg(strstr(p->filter_why, "gains the write seq 8 (T2) in place of the initial value"),
		      "%s", p->filter_why);
}
END_TEST

/* The same schedule without a branch after the read: kept.  By default
 * (no branch information), and when the only branch is before the read. */
START_TEST(case3_kept_no_branch)
{
	uint32_t ai, aj, ak;
	uint32_t r = case3_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_kept(p);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_at, &r), 0);
	expect_kept(p);
}
END_TEST

/* ---- Lemma 2: a_j recorded before a_i ---- */

/* T1 reads y, written by T2 right after a_j, before its a_i: moved before
 * a_j, the read loses the write. */
static uint32_t case4_trace(uint32_t *ai, uint32_t *aj, uint32_t *ak, bool write_first)
{
	spawn();
	start(2);
	if (write_first)
		wr(2, Y);
	*aj = wr(2, X);
	if (!write_first)
		wr(2, Y);
	start(1);
	uint32_t r = rd(1, Y);
	*ai = rd(1, X);
	*ak = wr(1, X);
	finish_model();
	return r;
}

START_TEST(case4_flag)
{
	uint32_t ai, aj, ak;
	case4_trace(&ai, &aj, &ak, false);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 3, 2, 2, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_flag(p, "case 4 (Lemma 2 (1))", "at seq 7 ");
	ck_assert_msg(strstr(p->filter_why, "loses its writer seq 5 (T2)"), "%s", p->filter_why);
}
END_TEST

/* T2 wrote y before a_j, and the schedule lets it: the read keeps it. */
START_TEST(case4_kept)
{
	uint32_t ai, aj, ak;
	case4_trace(&ai, &aj, &ak, true);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 2, 2, 1, 3, 2, 1, 1, 1,
				    UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* T1 reads y inside its window from T2's write after a_j; with a_j moved
 * into the window that write comes later.  Critical only with a branch. */
static void case5_trace(uint32_t *ai, uint32_t *aj, uint32_t *ak)
{
	spawn();
	start(2);
	*aj = wr(2, X);
	wr(2, Y);
	start(1);
	*ai = rd(1, X);
	rd(1, Y);
	*ak = wr(1, X);
	finish_model();
}

START_TEST(case5_flag)
{
	uint32_t ai, aj, ak;
	case5_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 2, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_flag(p, "case 5 (Lemma 2 (2))", "at seq 8 ");
}
END_TEST

START_TEST(case5_kept_no_branch)
{
	uint32_t ai, aj, ak;
	case5_trace(&ai, &aj, &ak);
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 2, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_kept(p);
}
END_TEST

/* Lemma 2 (2) from lock events (sidetrack before-window, as bank's lost
 * deposit): T2's section writes y after its acquire a_j, T1 reads it
 * between its acquires.  The cases do not depend on the detector. */
START_TEST(case5_sidetrack)
{
	spawn();
	start(2);
	uint32_t aj = ev(2, AVT_EV_ACQUIRE, L);
	wr(2, Y);
	ev(2, AVT_EV_RELEASE, L);
	start(1);
	uint32_t ai = ev(1, AVT_EV_ACQUIRE, L);
	ev(1, AVT_EV_RELEASE, L);
	rd(1, Y);
	uint32_t ak = ev(1, AVT_EV_ACQUIRE, L);
	finish_model();
	struct prediction *p = pred("sidetrack", ai, aj, ak, 0, 3, 1, 4, 2, 4, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_flag(p, "case 5 (Lemma 2 (2))", "T1's read of 0x5008");
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	expect_kept(p); /* a second call replaces the marks */
}
END_TEST

/* ---- what never counts ---- */

/* W2 R1 W1 predicted as R1 W2 W1: a_i loses its writer a_j; and W1 W2 R1
 * (WWR after the window): a_k gains a_j.  Both are the point. */
START_TEST(pattern_reads_never_flag)
{
	spawn();
	start(2);
	uint32_t aj = wr(2, X);
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 2, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

START_TEST(pattern_reads_never_flag_wwr)
{
	spawn();
	start(1);
	uint32_t ai = wr(1, X);
	wr(1, Y);
	uint32_t ak = rd(1, X);
	start(2);
	uint32_t aj = wr(2, X);
	rd(2, Y); /* after a_j, it loses T1's write: the interleaved state */
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 2, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* a_i read T2's write after a_j; run before a_j, it loses it.  That
 * would be case 5 for any other read of the window. */
START_TEST(pattern_reads_never_flag_later_write)
{
	spawn();
	start(2);
	uint32_t aj = wr(2, X);
	wr(2, X);
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 2, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* The recorded order keeps every read's writer: never marked, even when
 * every event follows a branch. */
START_TEST(recorded_order_never_flags)
{
	spawn();
	start(1);
	uint32_t ai = rd(1, X);
	wr(1, Y);
	rd(1, Y);
	uint32_t ak = wr(1, X);
	wr(1, Y);
	start(2);
	rd(2, Y);
	wr(2, Y);
	uint32_t aj = wr(2, X);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, UINT32_MAX);
	schedule_free(p->sched);
	p->sched = schedule_from_events(tr->ev, tr->nev);
	ck_assert_ptr_nonnull(p->sched);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(p);
}
END_TEST

/* Deadlock cycles have no window: not judged, though the same schedule
 * and events as a penelope prediction are marked (case 1). */
START_TEST(deadlock_not_judged)
{
	spawn();
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	wr(1, Y);
	start(2);
	uint32_t r = rd(2, Y), aj = wr(2, X);
	finish_model();
	struct prediction *d = pred("deadlock", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 1, UINT32_MAX);
	d->events[3] = r;
	d->nevents = 4;
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
	expect_kept(d);
	expect_flag(p, "case 1", "at seq 8 ");
}
END_TEST

/* A schedule that runs a thread past its events is refused. */
START_TEST(schedule_past_the_trace)
{
	spawn();
	start(1);
	uint32_t ai = rd(1, X), ak = wr(1, X);
	start(2);
	uint32_t aj = wr(2, X);
	finish_model();
	pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), -1);
}
END_TEST

/* ---- random traces against a reference ---- */

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rnd_state >> 33) % n);
}

/* Does every read the schedule forces see its recorded writer?  The
 * plain quadratic definition. */
static bool reference_all_kept(const struct schedule *s)
{
	uint32_t pos[3] = { 0, 0, 0 }, order[64], n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		for (uint32_t k = 0; k < s->steps[i].count; k++)
			order[n++] = m->tev[s->steps[i].thread][pos[s->steps[i].thread]++];
	for (uint32_t i = 0; i < n; i++) {
		const struct avt_event *r = &tr->ev[order[i]];
		if (r->kind != AVT_EV_READ)
			continue;
		int64_t rec = -1, sch = -1;
		for (uint32_t x = 0; x < order[i]; x++)
			if (tr->ev[x].kind == AVT_EV_WRITE && tr->ev[x].obj == r->obj)
				rec = x;
		for (uint32_t j = 0; j < i; j++)
			if (tr->ev[order[j]].kind == AVT_EV_WRITE && tr->ev[order[j]].obj == r->obj)
				sch = order[j];
		if (rec != sch)
			return false;
	}
	return true;
}

/* Random two-thread traces on two variables and random interleavings of
 * prefixes of them: a schedule whose reads all keep their writers is
 * never marked, and a marked one names a read the reference sees broken
 * (so at least one exists).  Some are marked (the test can see both). */
START_TEST(random_schedules_against_reference)
{
	unsigned marked = 0, kept_all = 0;
	rnd_state = 42;
	teardown(); /* each round has its own */
	for (int round = 0; round < 400; round++) {
		setup();
		spawn();
		uint32_t n1 = 3 + rnd(5), n2 = 2 + rnd(5);
		start(1);
		start(2);
		uint32_t acc[2][8], na[2] = { 0, 0 };
		while (na[0] < n1 || na[1] < n2) {
			uint32_t t = na[0] == n1 ? 2 : na[1] == n2 ? 1 : 1 + rnd(2);
			uint64_t v = rnd(2) ? X : Y;
			acc[t - 1][na[t - 1]++] = rnd(2) ? rd(t, v) : wr(t, v);
		}
		finish_model();
		uint32_t ai = acc[0][0], ak = acc[0][n1 - 1], aj = acc[1][rnd(n2)];
		/* T0, then random runs of T1 and T2 over prefixes of them */
		struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, UINT32_MAX);
		uint32_t left[3] = { 0, m->tnev[1], m->tnev[2] };
		p->sched->has_free = 0;
		while (left[1] + left[2] && rnd(8)) {
			uint32_t t = left[1] && (!left[2] || rnd(2)) ? 1 : 2;
			uint32_t c = 1 + rnd(left[t]);
			ck_assert_int_eq(schedule_append_run(p->sched, t, c), 0);
			left[t] -= c;
		}
		p->sched->has_free = 1;
		ck_assert_int_eq(pr_avfilter_br(m, ps.p, ps.n, br_yes, NULL), 0);
		bool all = reference_all_kept(p->sched);
		ck_assert_msg(!(all && p->filtered), "round %d: %s", round, p->filter_why);
		marked += p->filtered;
		kept_all += all;
		teardown();
	}
	ck_assert_uint_gt(marked, 10);
	ck_assert_uint_gt(kept_all, 10);
	tb = NULL; /* the fixture's teardown runs once more */
	m = NULL;
	tr = NULL;
	memset(&ps, 0, sizeof ps);
}
END_TEST

/* ---- reads before the violation (walk_prefix: p->prefix_why) ---- */

/* A read that loads value (AVT_F_VALUE, as access breakpoints record). */
static uint32_t rdv(uint32_t t, uint64_t var, uint64_t value)
{
	return evx(t, AVT_EV_READ, var, value, 0, 0x400 + pr_tracebuf_nevents(tb) * 8, AVT_F_VALUE);
}

/* T0 reads y (its initial value yinit), T1 writes y (the value T2 then
 * loads, ywrote) and x, T2 reads y, then z (unless next_is_pattern), then
 * x; the race T2's read of x before T1's write moves T2's read of y
 * before T1's write of y. */
static struct prediction *race_moving(bool values, uint64_t yinit, uint64_t ywrote,
				      bool next_is_pattern)
{
	spawn();
	if (values)
		rdv(0, Y, yinit);
	else
		rd(0, Y);
	start(1);
	wr(1, Y);
	uint32_t a = wr(1, X);
	start(2);
	if (values)
		rdv(2, Y, ywrote);
	else
		rd(2, Y);
	if (!next_is_pattern)
		rd(2, Z);
	uint32_t b = rd(2, X);
	finish_model();
	struct prediction *p = pred("pecan", b, a, a, 0, 4, 2, next_is_pattern ? 3 : 4, 1, 3,
				    UINT32_MAX);
	p->nevents = 2;
	p->pattern = "race-RW";
	return p;
}

/* The read of y loads 0 in place of 1, and T1's write of y is no event
 * of the race: the prediction is marked, with both values. */
START_TEST(prefix_value_changes)
{
	struct prediction *p = race_moving(true, 0, 1, false);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	ck_assert_ptr_nonnull(p->prefix_why);
	ck_assert_msg(strstr(p->prefix_why, "T2's read of 0x5008 at seq 8") &&
			      strstr(p->prefix_why, "would load 0x0 (the initial value) in place of 0x1 (seq 5 (T1))"),
		      "%s", p->prefix_why);
}
END_TEST

/* The same schedule, kept: where T1 wrote the value y had already; where
 * T2's next event is the race's own read (whatever y's new value does to
 * T2 happens after its forced part or decides the race itself:
 * acc_stackobj at -O2, where the stopper's load comes before its store);
 * where no values were recorded (annotations, watchpoints). */
static const struct {
	bool values;
	uint64_t yinit, ywrote;
	bool next_is_pattern;
} kept_cases[] = {
	{ true, 1, 1, false },
	{ true, 0, 1, true },
	{ false, 0, 0, false },
};

START_TEST(prefix_kept)
{
	struct prediction *p = race_moving(kept_cases[_i].values, kept_cases[_i].yinit,
					   kept_cases[_i].ywrote, kept_cases[_i].next_is_pattern);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	ck_assert_msg(!p->prefix_why, "case %d: %s", _i, p->prefix_why);
}
END_TEST

/* A lost update: T2's read before its write loses T1's write a_k, an
 * event of the pattern, and loads another value: that is the violation,
 * kept (AVFilter's cases do not mark it either). */
START_TEST(prefix_lost_update_kept)
{
	spawn();
	start(1);
	uint32_t ai = rdv(1, X, 0), ak = wr(1, X);
	start(2);
	rdv(2, X, 1);
	uint32_t aj = wr(2, X);
	finish_model();
	struct prediction *p = pred("penelope", ai, aj, ak, 0, 3, 1, 2, 2, 3, 1, 1, UINT32_MAX);
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	ck_assert_msg(!p->prefix_why, "%s", p->prefix_why);
	expect_kept(p);
}
END_TEST

/* A read after its thread's first pattern event is the violation's
 * effect: T1's second read of y, after a, may change freely. */
START_TEST(prefix_after_pattern_kept)
{
	spawn();
	rdv(0, Y, 0);
	start(2);
	uint32_t b = rd(2, X);
	wr(2, Y);
	start(1);
	uint32_t a = wr(1, X);
	rdv(1, Y, 1);
	finish_model();
	/* T1 first: its read of y after a loads 0 in place of 1 */
	struct prediction *p = pred("pecan", a, b, b, 0, 4, 1, 3, 2, 3, UINT32_MAX);
	p->nevents = 2;
	ck_assert_int_eq(pr_avfilter(m, ps.p, ps.n), 0);
	ck_assert_msg(!p->prefix_why, "%s", p->prefix_why);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_avfilter");
	TCase *c = tcase_create("cases");
	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, case1_flag);
	tcase_add_test(c, case1_kept);
	tcase_add_loop_test(c, value_use, 0, 5);
	tcase_add_test(c, case2_flag);
	tcase_add_test(c, case2_kept);
	tcase_add_test(c, case3_flag);
	tcase_add_test(c, case3_kept_no_branch);
	tcase_add_test(c, case4_flag);
	tcase_add_test(c, case4_kept);
	tcase_add_test(c, case5_flag);
	tcase_add_test(c, case5_kept_no_branch);
	tcase_add_test(c, case5_sidetrack);
	suite_add_tcase(s, c);
	TCase *n = tcase_create("never");
	tcase_add_checked_fixture(n, setup, teardown);
	tcase_add_test(n, pattern_reads_never_flag);
	tcase_add_test(n, pattern_reads_never_flag_wwr);
	tcase_add_test(n, pattern_reads_never_flag_later_write);
	tcase_add_test(n, recorded_order_never_flags);
	tcase_add_test(n, deadlock_not_judged);
	tcase_add_test(n, schedule_past_the_trace);
	tcase_add_test(n, random_schedules_against_reference);
	suite_add_tcase(s, n);
	TCase *v = tcase_create("values");
	tcase_add_checked_fixture(v, setup, teardown);
	tcase_add_test(v, prefix_value_changes);
	tcase_add_loop_test(v, prefix_kept, 0, (int)(sizeof kept_cases / sizeof kept_cases[0]));
	tcase_add_test(v, prefix_lost_update_kept);
	tcase_add_test(v, prefix_after_pattern_kept);
	suite_add_tcase(s, v);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
