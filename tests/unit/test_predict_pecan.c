/*
 * PECAN on hand-built traces: a race whose recorded order is reversed,
 * not when both hold a lock, not when create orders them, not within one
 * thread; an atomicity violation; a two-variable atomic-set violation;
 * the schedules of PECAN's Figures 4 and 5 (the event and its dependents
 * move; the outermost lock's critical section moves with them); pattern
 * files (valid, and errors with their line); one prediction per anomaly
 * across detectors; rank by variables, then threads; a flag's locked
 * store orders the payload written before it and read after it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predict/model.h"
#include "predict/pattern.h"
#include "predict/pecan.h"
#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

enum { X = 0x5000, Y = 0x5008, LA = 0x1000, LB = 0x1040 };

#include "predict_test.h"

static uint32_t rd(uint32_t t, uint64_t v, uint64_t site)
{
	return ev(t, AVT_EV_READ, v, site);
}

static uint32_t wr(uint32_t t, uint64_t v, uint64_t site)
{
	return ev(t, AVT_EV_WRITE, v, site);
}

/* Lock l at a site of its own (per lock). */
static uint32_t lock(uint32_t t, uint64_t l)
{
	return acq(t, l, 0x600 + (l & 0xff));
}

static uint32_t unlock(uint32_t t, uint64_t l)
{
	return rel(t, l, 0x600 + (l & 0xff));
}

/* The trace written so far, its model and an empty candidate set. */
static void model(void)
{
	finish_model();
	pr_cands_init(&cs, m);
}

/* model(), then the built-in patterns' candidates. */
static void detect(void)
{
	const struct pr_patterns *b = pr_builtin_patterns();
	model();
	ck_assert_int_eq(pr_pecan(m, &cs, &b, 1), 0);
}

/* The candidate of pattern name, or NULL. */
static const struct pr_cand *find(const char *name)
{
	for (size_t i = 0; i < cs.n; i++)
		if (cs.c[i].det == PR_DET_PECAN && !strcmp(cs.c[i].pp->name, name))
			return &cs.c[i];
	return NULL;
}

static const char *synth(const struct pr_cand *c)
{
	static char buf[256];
	uint64_t budget = 1000000;
	struct pr_plan plan;
	struct schedule *s;
	ck_assert_int_eq(pr_pecan_synth(m, c, &budget, &plan, &s), 1);
	snprintf(buf, sizeof buf, "%s", steps(s));
	schedule_free(s);
	return buf;
}

/* T0 writes x after creating T1, T1 reads it: the read can come first. */
START_TEST(race_reversed)
{
	spawn(1);
	uint32_t w = wr(0, X, 0x400);
	start(1);
	uint32_t r = rd(1, X, 0x480);
	detect();
	const struct pr_cand *c = find("race-RW");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->ev[0], r);
	ck_assert_uint_eq(c->ev[1], w);
	/* T0 to its create, T1 to its read; T0 stands before its write */
	ck_assert_str_eq(synth(c), "T0:2 T1:2 free");
	ck_assert_ptr_null(find("race-WR")); /* recorded that way: no prediction */
}
END_TEST

START_TEST(race_same_lock)
{
	spawn(1);
	lock(0, LA);
	wr(0, X, 0x400);
	unlock(0, LA);
	start(1);
	lock(1, LA);
	rd(1, X, 0x480);
	unlock(1, LA);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

START_TEST(race_ordered_by_create)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	wr(0, X, 0x400);
	ev(0, AVT_EV_CREATE, 1, 0x708);
	start(1);
	rd(1, X, 0x480);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

START_TEST(same_thread)
{
	spawn(1);
	wr(0, X, 0x400);
	rd(0, X, 0x480);
	wr(0, Y, 0x500);
	start(1);
	detect();
	ck_assert_uint_eq(cs.n, 0);
}
END_TEST

/* T1 reads x twice; T2's write, recorded after, fits in between. */
START_TEST(atomicity_rwr)
{
	spawn(2);
	start(1);
	uint32_t r1 = rd(1, X, 0x400), r2 = rd(1, X, 0x480);
	start(2);
	uint32_t w = wr(2, X, 0x500);
	detect();
	const struct pr_cand *c = find("atomicity-RWR");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->ev[0], r1);
	ck_assert_uint_eq(c->ev[1], w);
	ck_assert_uint_eq(c->ev[2], r2);
	ck_assert_str_eq(synth(c), "T0:3 T1:2 T2:2 free");
}
END_TEST

/* T1 writes x then y, each under its own lock; T2 reads both, later: the
 * torn read W1(x) R2(x) R2(y) W1(y) is atomic-set-8, and no pattern of
 * one variable fits (each thread touches each variable once). */
START_TEST(atomic_set)
{
	spawn(2);
	start(1);
	lock(1, LA);
	uint32_t wx = wr(1, X, 0x400);
	unlock(1, LA);
	lock(1, LB);
	uint32_t wy = wr(1, Y, 0x410);
	unlock(1, LB);
	start(2);
	lock(2, LA);
	uint32_t rx = rd(2, X, 0x500);
	unlock(2, LA);
	lock(2, LB);
	uint32_t ry = rd(2, Y, 0x510);
	unlock(2, LB);
	detect();
	const struct pr_cand *c = find("atomic-set-8");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->ev[0], wx);
	ck_assert_uint_eq(c->ev[1], rx);
	ck_assert_uint_eq(c->ev[2], ry);
	ck_assert_uint_eq(c->ev[3], wy);
	ck_assert_ptr_null(find("atomicity-RWR"));
	ck_assert_ptr_null(find("atomicity-WRW"));
	/* T1 stands after releasing LA, before its LB section; T2 runs both
	 * sections and goes on after `free` */
	ck_assert_str_eq(synth(c), "T0:3 T1:4 T2:6 free");
}
END_TEST

/* The first candidate of pattern name with events e[0 .. n). */
static const struct pr_cand *find_ev(const char *name, const uint32_t *e, uint32_t n)
{
	for (size_t i = 0; i < cs.n; i++)
		if (cs.c[i].det == PR_DET_PECAN && !strcmp(cs.c[i].pp->name, name) &&
		    cs.c[i].nev == n && !memcmp(cs.c[i].ev, e, n * sizeof *e))
			return &cs.c[i];
	return NULL;
}

/* An atomic-set-5 shape: T1 reads x then y in a block, after `pad` other
 * accesses; T2 writes x, then y `d` accesses on, then `tail` more
 * accesses; e[] gets the four events. */
static void set5_trace(uint32_t pad, uint32_t d, uint32_t tail, uint32_t e[4])
{
	spawn(2);
	start(1);
	for (uint32_t k = 0; k < pad; k++)
		rd(1, 0x7000 + k * 8, 0x300);
	ev(1, AVT_EV_BEGIN, 0, 0x3f0);
	e[0] = rd(1, X, 0x400);
	e[3] = rd(1, Y, 0x410);
	ev(1, AVT_EV_END, 0, 0x3f8);
	start(2);
	ev(2, AVT_EV_BEGIN, 0, 0x4f0);
	e[1] = wr(2, X, 0x500);
	for (uint32_t k = 0; k + 1 < d; k++)
		wr(2, 0x8000 + k * 8, 0x508);
	e[2] = wr(2, Y, 0x510);
	ev(2, AVT_EV_END, 0, 0x4f8);
	for (uint32_t k = 0; k < tail; k++)
		wr(2, 0x9000 + k * 8, 0x520);
	detect();
}

/* atomic-set-5 with T2's write of y d accesses after its write of x (the
 * search looks 32 accesses along a thread), after `pad` other accesses
 * of T1 that shift where T2's accesses fall in the search's index. */
START_TEST(walk_reach)
{
	static const uint32_t pads[] = { 0, 5, 17, 30 };
	uint32_t d = _i % 2 ? 33 : 32, pad = pads[_i / 2], e[4];
	set5_trace(pad, d, 0, e);
	ck_assert_msg((find_ev("atomic-set-5", e, 4) != NULL) == (d <= 32),
		      "distance %u after %u: %s", d, pad, d <= 32 ? "not found" : "found");
}
END_TEST

/* The same with T2's write of y d = 2 .. 31 accesses on: the Bloom
 * filters the walk asks cover a few accesses each (BLOCK in pecan.c), so
 * y may sit in a block between the first and the last of the reach; every
 * block is asked, and y found, at every distance and alignment. */
START_TEST(walk_reach_inner_blocks)
{
	uint32_t d = 2 + _i % 30, pad = _i / 30, e[4];
	set5_trace(pad, d, 40, e); /* the tail: the reach's last block, past y */
	ck_assert_msg(find_ev("atomic-set-5", e, 4) != NULL, "distance %u after %u: not found", d,
		      pad);
}
END_TEST

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* The search takes patterns that differ only in access types together
 * (one walk for atomic-set-5, -6 and -8, another for the atomicity
 * patterns, and for the two user patterns here, whose second event reads
 * or writes a new variable): each finds the same candidates as alone. */
START_TEST(patterns_together_as_alone)
{
	struct pr_patterns user = { NULL, 0, 0 };
	ck_assert_int_eq(pr_patterns_parse(&user,
					   "new-r: w t1 x u1, r t1 y u1, w t2 y u2\n"
					   "new-w: w t1 x u1, w t1 y u1, w t2 y u2\n",
					   "p.txt"),
			 0);
	uint32_t s = 7;
	spawn(3);
	for (uint32_t t = 1; t <= 3; t++)
		start(t);
	for (uint32_t n = 0; n < 600; n++) {
		uint32_t t = 1 + lcg(&s) % 3, r = lcg(&s) % 16;
		uint64_t v = 0x5000 + (lcg(&s) % 6) * 8, site = 0x400 + (t * 4 + r % 4) * 8;
		if (r == 0)
			ev(t, AVT_EV_BEGIN, 0, 0x3f0);
		else if (r == 1)
			ev(t, AVT_EV_END, 0, 0x3f8);
		else if (r == 2)
			lock(t, LA);
		else if (r == 3)
			unlock(t, LA);
		else
			ev(t, r % 2 ? AVT_EV_READ : AVT_EV_WRITE, v, site);
	}
	model();
	const struct pr_patterns *all[2] = { pr_builtin_patterns(), &user };
	ck_assert_int_eq(pr_pecan(m, &cs, all, 2), 0);
	size_t total = 0, kinds = 0;
	for (unsigned set = 0; set < 2; set++)
		for (size_t i = 0; i < all[set]->n; i++) {
			const struct pr_pat *p = &all[set]->p[i];
			struct pr_patterns one = { (struct pr_pat *)p, 1, 1 };
			const struct pr_patterns *pp = &one;
			struct pr_cands alone;
			pr_cands_init(&alone, m);
			ck_assert_int_eq(pr_pecan(m, &alone, &pp, 1), 0);
			size_t together = 0;
			for (size_t k = 0; k < cs.n; k++) /* the site pairs' are apart */
				together += cs.c[k].pp == p && !cs.c[k].pair;
			ck_assert_msg(together == alone.n, "%s: %zu together, %zu alone", p->name,
				      together, alone.n);
			for (size_t k = 0; k < alone.n; k++)
				ck_assert_msg(find_ev(p->name, alone.c[k].ev, alone.c[k].nev),
					      "%s: candidate %zu alone only", p->name, k);
			total += alone.n;
			kinds += alone.n > 0;
			pr_cands_release(&alone);
		}
	pr_patterns_release(&user);
	size_t pairs = 0;
	for (size_t k = 0; k < cs.n; k++)
		pairs += cs.c[k].pair;
	ck_assert_uint_eq(total + pairs, cs.n);
	ck_assert_msg(kinds >= 12, "only %zu patterns found: the trace tests little", kinds);
}
END_TEST

/* With call stacks a region ends where a loop goes round: T1 reads x in
 * two calls of one function, at the same call site (_i 0: a loop, two
 * regions, no atomicity-RWR) or at a later one (_i 1: straight-line code,
 * one region); T2's write, recorded after, would fit in between. */
START_TEST(regions_end_at_loops)
{
	bool loop = _i == 0;
	spawn(2);
	start(1);
	uint32_t r1 = rd(1, X, 0x900);
	stack(r1, 2, (uint64_t)0x900, 2u, (uint64_t)0x800, 1u);
	uint32_t r2 = rd(1, X, 0x900);
	stack(r2, 2, (uint64_t)0x900, 3u, (uint64_t)(loop ? 0x800 : 0x840), 1u);
	start(2);
	uint32_t w = wr(2, X, 0x500);
	detect();
	uint32_t e[3] = { r1, w, r2 };
	ck_assert_msg((find_ev("atomicity-RWR", e, 3) != NULL) == !loop, "%s: %s",
		      loop ? "loop" : "straight line", loop ? "found" : "not found");
}
END_TEST

/* --atomic: T1 reads x twice in one call of f (sites 0x900, 0x908); T2's
 * write fits in between.  A region is a call of a named function: found
 * when f is named (_i 0), not when only another function is (_i 1). */
static bool named_f(void *ctx, uint16_t mod, uint64_t off)
{
	return *(const bool *)ctx && off >= 0x900 && off < 0xa00;
}

START_TEST(atomic_regions_are_named_calls)
{
	bool f_named = _i == 0;
	spawn(2);
	start(1);
	uint32_t r1 = rd(1, X, 0x900);
	stack(r1, 2, (uint64_t)0x900, 2u, (uint64_t)0x800, 1u);
	uint32_t r2 = rd(1, X, 0x908);
	stack(r2, 2, (uint64_t)0x908, 2u, (uint64_t)0x800, 1u);
	start(2);
	uint32_t w = wr(2, X, 0x500);
	model();
	const struct pr_patterns *b = pr_builtin_patterns();
	ck_assert_int_eq(pr_pecan_atomic(m, &cs, &b, 1, named_f, &f_named), 0);
	uint32_t e[3] = { r1, w, r2 };
	ck_assert_msg((find_ev("atomicity-RWR", e, 3) != NULL) == f_named, "f %s: %s",
		      f_named ? "named" : "not named", f_named ? "not found" : "found");
}
END_TEST

/* Figure 4: T2's write recorded first, T1 reads x nested in LA, LB later.
 * Reversed (race-RW): T1's read and the acquisitions it depends on move
 * before T2's write, which waits. */
START_TEST(figure4_dependents_move)
{
	spawn(2);
	start(2);
	wr(2, X, 0x500);
	ev(2, AVT_EV_EXIT, 0, 0);
	start(1);
	lock(1, LA);
	lock(1, LB);
	rd(1, X, 0x400);
	unlock(1, LB);
	unlock(1, LA);
	detect();
	const struct pr_cand *c = find("race-RW");
	ck_assert_ptr_nonnull(c);
	/* T2 stands before its write; T1 runs start, LA, LB, the read */
	ck_assert_str_eq(synth(c), "T0:3 T2:1 T1:4 free");
}
END_TEST

/* Figure 5: T1 reads x nested in LA and LB, T2 later takes LA, then
 * writes x.  Moving T2's write before T1's read needs T2's section on LA
 * first: T1's outermost lock, LA, moves after it, with all it holds. */
START_TEST(figure5_outermost_lock_moves)
{
	spawn(2);
	start(1);
	lock(1, LA);
	lock(1, LB);
	uint32_t r = rd(1, X, 0x400);
	unlock(1, LB);
	unlock(1, LA);
	start(2);
	lock(2, LA);
	wr(2, Y, 0x510);
	unlock(2, LA);
	uint32_t w = wr(2, X, 0x500);
	detect();
	const struct pr_cand *c = find("race-WR");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->ev[0], w);
	ck_assert_uint_eq(c->ev[1], r);
	/* standing right before the read (holding LA) would block T2: T1
	 * stands before its LA section instead */
	struct pr_plan p;
	ck_assert_int_eq(pr_pecan_plan(m, c, 0, &p), 0);
	ck_assert_str_eq(synth(c), "T0:3 T1:1 T2:5 free");
}
END_TEST

/* ---- pattern files ---- */

/* Runs parse with stderr captured into err. */
static int parse_capture(struct pr_patterns *pats, const char *text, char *err, size_t len)
{
	struct unit_capture c;
	unit_capture_start(&c);
	int rc = pr_patterns_parse(pats, text, "p.txt");
	char *out = unit_capture_stop(&c);
	snprintf(err, len, "%s", out);
	free(out);
	return rc;
}

START_TEST(pattern_parse_valid)
{
	struct pr_patterns pats = { NULL, 0, 0 };
	char err[512];
	ck_assert_int_eq(parse_capture(&pats, "# torn\n\ntorn: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1\n"
				    "mine consecutive: r t1 v a, w t2 v b  # a race\n", err, sizeof err), 0);
	ck_assert_uint_eq(pats.n, 2);
	ck_assert_str_eq(pats.p[0].name, "torn");
	ck_assert_uint_eq(pats.p[0].n, 4);
	ck_assert_uint_eq(pats.p[0].nthr, 2);
	ck_assert_uint_eq(pats.p[0].nvar, 2);
	ck_assert(pats.p[0].ev[3].write && pats.p[0].ev[3].thr == 0 && pats.p[0].ev[3].var == 1);
	ck_assert(pats.p[1].consecutive);
	/* the built-ins parse in the same grammar */
	ck_assert_uint_eq(pr_builtin_patterns()->n, 15);
	pr_patterns_release(&pats);
}
END_TEST

START_TEST(pattern_parse_errors)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "a: r t1 x u1, w t2 x u2\nb: r t1 x u1, q t2 x u2\n", "p.txt:2: the access type" },
		{ "\n\nc: r t1 x u1\n", "p.txt:3: a pattern has at least 2 events" },
		{ "d: r t1 x u1, r t2 x u2\n", "p.txt:1: no two threads conflict" },
		{ "e: r t2 x u1, w t1 x u2\n", "p.txt:1: threads must be named t1" },
		{ "f: r t1 x u1, w t2 x u1\n", "p.txt:1: a region belongs to one thread" },
		{ "g: w t1 x u1, r t2 x u2, w t3 y u3\n", "p.txt:1: every thread but t1" },
		{ "h consecutive: r t1 x u1, w t2 x u2, r t1 x u1\n", "p.txt:1: 'consecutive' needs" },
		{ "i r t1 x u1\n", "p.txt:1: expected 'NAME" },
		{ "j: r t1 x u1, w t2 x u2\nj: r t1 x u1, w t2 x u2\n", "p.txt:2: pattern 'j' defined twice" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct pr_patterns pats = { NULL, 0, 0 };
		char err[512];
		ck_assert_int_eq(parse_capture(&pats, bad[i].text, err, sizeof err), -1);
		ck_assert_uint_eq(pats.n, 0);
		ck_assert_msg(strstr(err, bad[i].msg), "error '%s' lacks '%s'", err, bad[i].msg);
		pr_patterns_release(&pats);
	}
}
END_TEST

/* A user pattern is searched like a built-in. */
START_TEST(user_pattern_found)
{
	struct pr_patterns pats = { NULL, 0, 0 };
	ck_assert_int_eq(pr_patterns_parse(&pats, "stale: r t1 x a, w t2 x b\n", "p.txt"), 0);
	spawn(1);
	wr(0, X, 0x400);
	start(1);
	rd(1, X, 0x480);
	model();
	const struct pr_patterns *pp = &pats;
	ck_assert_int_eq(pr_pecan(m, &cs, &pp, 1), 0);
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_str_eq(cs.c[0].pp->name, "stale");
	pr_patterns_release(&pats);
}
END_TEST

/* ---- across detectors, and rank ---- */

/* PENELOPE's RWR and PECAN's atomicity-RWR on the same code: one
 * prediction that names both. */
START_TEST(dedupe_across_detectors)
{
	struct prediction_set set;
	struct predict_opts o = { .penelope = true, .pecan = true };
	spawn(2);
	start(1);
	rd(1, X, 0x400);
	rd(1, X, 0x480);
	start(2);
	wr(2, X, 0x500);
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_int_eq(predict_run(tr, &o, &set), 0);
	unsigned rwr = 0;
	for (size_t i = 0; i < set.n; i++)
		if (strstr(set.p[i].pattern, "RWR")) {
			char d[64];
			rwr++;
			ck_assert_str_eq(predict_detectors(&set.p[i], d, sizeof d), "penelope+pecan");
			ck_assert_uint_eq(set.p[i].nvars, 1);
		}
	ck_assert_uint_eq(rwr, 1);
	prediction_set_release(&set);
	o.pecan = false;
	ck_assert_int_eq(predict_run(tr, &o, &set), 0);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_uint_eq(set.p[0].ndetectors, 1);
	prediction_set_release(&set);
}
END_TEST

/* Issue 29's hand-off (tests/targets/atomic_wait_ok.cc): T2 writes the
 * payload X, then publishes flag F; T1 polls F (0), then sees it set and
 * reads X.  _i 0: F's store is a locked instruction (std::atomic's xchg),
 * so the read that saw it is ordered after it (model.h) and so is the
 * payload's: no race on X, and no prediction moves the poll that saw F
 * before the store (an atomic set of the first poll and X's read may
 * stay: it keeps every read's writer).  _i 1: a plain store: X's race
 * (and F's) predicted. */
START_TEST(locked_flag_orders_payload)
{
	enum { F = 0x5010 };
	struct predict_opts o = { .penelope = true, .pecan = true, .order = true };
	spawn(2);
	start(1);
	rd(1, F, 0x480);
	start(2);
	uint32_t wx = wr(2, X, 0x400);
	uint32_t wf = _i == 0 ? evx(2, AVT_EV_RMW, F, 0, 0, 0x440, AVT_F_ATOMIC) : wr(2, F, 0x440);
	uint32_t rf = rd(1, F, 0x480);
	uint32_t rx = rd(1, X, 0x4c0);
	finish_predict(&o);
	unsigned onx = 0, rf_first = 0;
	for (size_t i = 0; i < ps.n; i++) {
		const struct prediction *q = &ps.p[i];
		for (unsigned k = 0; k < q->nobjs && !strncmp(q->pattern, "race-", 5); k++)
			onx += q->objs[k] == X;
		for (unsigned k = 0; k + 1 < q->nevents; k++)
			rf_first += q->events[k] == rf && q->events[k + 1] == wf;
	}
	if (_i == 0) {
		ck_assert_uint_eq(onx, 0);
		ck_assert_uint_eq(rf_first, 0);
		ck_assert_uint_ge(ps.n, 1); /* the first poll may still see the flag set */
	} else {
		ck_assert_uint_ge(onx, 1);
		ck_assert_uint_ge(rf_first, 1);
		bool race = false;
		for (size_t i = 0; i < ps.n; i++)
			race |= !strcmp(ps.p[i].pattern, "race-RW") && ps.p[i].events[0] == rx &&
				ps.p[i].events[1] == wx;
		ck_assert(race);
	}
}
END_TEST

START_TEST(rank_variables_then_threads)
{
	struct prediction p[4];
	memset(p, 0, sizeof p);
	/* a: 2 variables; b: 1 variable, 3 threads; c, d: 1 and 2, d fewer
	 * context switches */
	p[0] = (struct prediction){ .detector = "a", .pattern = "x", .nvars = 2, .nthreads = 2 };
	p[1] = (struct prediction){ .detector = "b", .pattern = "x", .nvars = 1, .nthreads = 3 };
	p[2] = (struct prediction){ .detector = "c", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 5 };
	p[3] = (struct prediction){ .detector = "d", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 1, .cut_seq = 99 };
	pr_predictions_rank(p, 4);
	ck_assert_str_eq(p[0].detector, "d");
	ck_assert_str_eq(p[1].detector, "c");
	ck_assert_str_eq(p[2].detector, "b");
	ck_assert_str_eq(p[3].detector, "a");
	ck_assert_uint_eq(p[3].id, 4);
}
END_TEST

/* Issue 29 (tests/targets/atomic_wait.cc): a race with a locked access
 * (a flag's xchg) goes after a race on plain data even when it has fewer
 * context switches; with no plain race, the locked races keep their order
 * among the other predictions (a lock-free stack's ABA is such a race). */
START_TEST(rank_locked_races_after_plain)
{
	struct prediction p[3];
	memset(p, 0, sizeof p);
	p[0] = (struct prediction){ .detector = "flag", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 2, .locked_race = true };
	p[1] = (struct prediction){ .detector = "atomicity", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 3 };
	p[2] = (struct prediction){ .detector = "payload", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 5, .plain_race = true };
	pr_predictions_rank(p, 3);
	ck_assert_str_eq(p[0].detector, "atomicity");
	ck_assert_str_eq(p[1].detector, "payload");
	ck_assert_str_eq(p[2].detector, "flag");
	/* no plain race: by context switches, the locked race first */
	p[0] = (struct prediction){ .detector = "atomicity", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 3 };
	p[1] = (struct prediction){ .detector = "flag", .pattern = "x", .nvars = 1, .nthreads = 2,
				    .context_switches = 2, .locked_race = true };
	pr_predictions_rank(p, 2);
	ck_assert_str_eq(p[0].detector, "flag");
	ck_assert_str_eq(p[1].detector, "atomicity");
}
END_TEST

/* ---- site pairs ---- */

static size_t npairs(void)
{
	size_t n = 0;
	for (size_t i = 0; i < cs.n; i++)
		n += cs.c[i].pair;
	return n;
}

/* The site pair candidate whose events are first, second, or NULL. */
static const struct pr_cand *find_pair(uint32_t first, uint32_t second)
{
	for (size_t i = 0; i < cs.n; i++)
		if (cs.c[i].pair && cs.c[i].ev[0] == first && cs.c[i].ev[1] == second)
			return &cs.c[i];
	return NULL;
}

/* explore_nullpub's shape: T0 publishes x, creates T1, uses x once (USE)
 * and polls it; T1 polls it at the same site, then clears it (CLOSE).
 * USE and CLOSE are far apart in x's order (no race to the pattern, whose
 * neighbours are all reads or one thread's); as a site pair, CLOSE runs
 * before USE.  CLOSE before T0's last poll is atomicity-RWR's already
 * (two polls around it), and the publish is ordered by the create.
 * _i 1: USE and CLOSE under one lock, no pair.  9 polls each: with the
 * publish and USE, 20 accesses, more than the slots, of 4 (thread, site,
 * type) only. */
START_TEST(site_pairs_far_race)
{
	uint32_t use, close, poll = 0;
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	wr(0, X, 0x400); /* PUBLISH */
	ev(0, AVT_EV_CREATE, 1, 0x708);
	if (_i)
		lock(0, LA);
	use = rd(0, X, 0x410);
	if (_i)
		unlock(0, LA);
	for (int k = 0; k < 9; k++)
		poll = rd(0, X, 0x420);
	start(1);
	for (int k = 0; k < 9; k++)
		rd(1, X, 0x420);
	if (_i)
		lock(1, LA);
	close = wr(1, X, 0x430);
	if (_i)
		unlock(1, LA);
	finish_and_join(1);
	detect();
	const struct pr_cand *race = find("race-WR"); /* the first: the pattern's, if any */
	ck_assert_ptr_null(find("race-RW"));
	ck_assert(!race || race->pair);
	ck_assert_ptr_nonnull(find("atomicity-RWR"));
	ck_assert_ptr_null(find_pair(close, poll));
	const struct pr_cand *c = find_pair(close, use);
	ck_assert_uint_eq(npairs(), _i ? 0 : 1);
	if (_i) {
		ck_assert_ptr_null(c);
		return;
	}
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->pp->name, "race-WR");
	ck_assert_uint_eq(c->thr[0], 1);
	ck_assert_uint_eq(c->thr[1], 0);
	/* T0 to its create, T1 to its write, then T1 on first */
	ck_assert_str_eq(synth(c), "T0:3 T1:11 free");
}
END_TEST

/* T1 .. T4 read x at sites of their own, then T5 writes it: the pattern's
 * race is the neighbour's (T4's read); the site pairs add T3's and T2's
 * (the latest first), two at most per variable.  predict_run() ranks the
 * pattern's first. */
START_TEST(site_pairs_capped_and_after)
{
	uint32_t r[5], w;
	spawn(5);
	for (uint32_t t = 1; t <= 4; t++) {
		start(t);
		r[t] = rd(t, X, 0x400 + (uint64_t)t * 8);
	}
	start(5);
	w = wr(5, X, 0x480);
	finish_and_join(5);
	detect();
	const struct pr_cand *c = find("race-WR");
	ck_assert_ptr_nonnull(c);
	ck_assert(!c->pair);
	ck_assert_uint_eq(c->ev[1], r[4]);
	ck_assert_uint_eq(npairs(), 2);
	ck_assert_ptr_nonnull(find_pair(w, r[3]));
	ck_assert_ptr_nonnull(find_pair(w, r[2]));
	struct predict_opts o = { .pecan = true };
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	ck_assert_uint_eq(ps.n, 3);
	ck_assert(!ps.p[0].site_pair);
	ck_assert_uint_eq(ps.p[0].events[1], r[4]);
	ck_assert(ps.p[1].site_pair && ps.p[2].site_pair);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("predict_pecan");
	TCase *d = tcase_create("detect");
	tcase_add_checked_fixture(d, setup, teardown);
	tcase_add_test(d, race_reversed);
	tcase_add_test(d, race_same_lock);
	tcase_add_test(d, race_ordered_by_create);
	tcase_add_test(d, same_thread);
	tcase_add_test(d, atomicity_rwr);
	tcase_add_test(d, atomic_set);
	tcase_add_loop_test(d, walk_reach, 0, 8);
	tcase_add_loop_test(d, walk_reach_inner_blocks, 0, 30 * 8);
	tcase_add_loop_test(d, regions_end_at_loops, 0, 2);
	tcase_add_loop_test(d, atomic_regions_are_named_calls, 0, 2);
	tcase_add_test(d, patterns_together_as_alone);
	tcase_add_test(d, figure4_dependents_move);
	tcase_add_test(d, figure5_outermost_lock_moves);
	tcase_add_test(d, user_pattern_found);
	tcase_add_test(d, dedupe_across_detectors);
	tcase_add_loop_test(d, site_pairs_far_race, 0, 2);
	tcase_add_test(d, site_pairs_capped_and_after);
	tcase_add_loop_test(d, locked_flag_orders_payload, 0, 2);
	suite_add_tcase(s, d);
	TCase *p = tcase_create("patterns");
	tcase_add_test(p, pattern_parse_valid);
	tcase_add_test(p, pattern_parse_errors);
	tcase_add_test(p, rank_variables_then_threads);
	tcase_add_test(p, rank_locked_races_after_plain);
	suite_add_tcase(s, p);
	return unit_run(s);
}
