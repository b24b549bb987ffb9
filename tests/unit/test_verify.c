/*
 * avtrace verify's pure logic (verify/): events numbered in source terms,
 * counterparts across a rebuild, which old events are essential, the plan,
 * and the picker that enacts it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trace/event.h"
#include "trace/schedule.h"
#include "verify/verify.h"
#include "unit_util.h"

/* One event: thread, kind, function, object, line (tindex in order). */
struct ev {
	uint32_t thread;
	uint16_t kind;
	const char *func, *obj;
	unsigned line;
};

static void build(struct vf_desc *d, const struct ev *v, size_t n)
{
	uint32_t next[8] = { 0 };
	memset(d, 0, sizeof *d);
	for (size_t i = 0; i < n; i++) {
		struct vf_event e = { .thread = v[i].thread, .tindex = next[v[i].thread]++, .kind = v[i].kind,
				      .func = (char *)v[i].func, .file = "bank.c", .line = v[i].line,
				      .obj = (char *)v[i].obj };
		ck_assert_int_eq(vf_desc_add(d, &e), 0);
	}
	vf_desc_number(d);
}

#define ACQ AVT_EV_ACQUIRE
#define REL AVT_EV_RELEASE
#define RD AVT_EV_READ
#define WR AVT_EV_WRITE

/* the bank bug: each thread reads in one critical section, writes in
 * another; T0 creates both */
static const struct ev bug[] = {
	{ 0, AVT_EV_START, "", "", 0 },
	{ 0, AVT_EV_CREATE, "main", "T1", 90 },
	{ 0, AVT_EV_CREATE, "main", "T2", 90 },
	{ 1, AVT_EV_START, "", "", 0 },
	{ 1, ACQ, "deposit", "lock", 60 },
	{ 1, RD, "deposit", "balance", 61 },
	{ 1, REL, "deposit", "lock", 62 },
	{ 1, ACQ, "deposit", "lock", 63 },
	{ 1, WR, "deposit", "balance", 64 },
	{ 1, REL, "deposit", "lock", 65 },
	{ 2, AVT_EV_START, "", "", 0 },
	{ 2, ACQ, "deposit", "lock", 60 },
	{ 2, RD, "deposit", "balance", 61 },
	{ 2, REL, "deposit", "lock", 62 },
	{ 2, ACQ, "deposit", "lock", 63 },
	{ 2, WR, "deposit", "balance", 64 },
	{ 2, REL, "deposit", "lock", 65 },
};
#define NBUG (sizeof bug / sizeof bug[0])

/* run T0 3, T1 4 (through its first release), T2 6, free; the pattern:
 * T1's read, T2's write, T1's write */
static struct schedule *bug_schedule(void)
{
	struct schedule *s = schedule_new();
	schedule_append_run(s, 0, 3);
	schedule_append_run(s, 1, 4);
	schedule_append_run(s, 2, 6);
	s->has_free = 1;
	return s;
}

static const struct vf_ref pattern[] = { { 1, 2 }, { 2, 5 }, { 1, 5 } };

static void plan_for(const struct ev *nw, size_t n, struct vf_plan *p)
{
	struct vf_desc o, d;
	build(&o, bug, NBUG);
	build(&d, nw, n);
	struct schedule *s = bug_schedule();
	ck_assert_int_eq(vf_plan_make(&o, s, pattern, 3, &d, p), 0);
	schedule_free(s);
	/* the plan's strings point into the descriptions: copy what is checked */
	static char func[64], obj[64];
	if (!p->possible) {
		snprintf(func, sizeof func, "%s", p->parted.func);
		snprintf(obj, sizeof obj, "%s", p->has_instead ? p->instead.obj : "");
		p->parted.func = func;
		p->instead.obj = obj;
	}
	vf_desc_release(&o);
	vf_desc_release(&d);
}

START_TEST(test_occurrences)
{
	static const struct ev v[] = {
		{ 1, RD, "f", "x", 1 }, { 1, RD, "g", "x", 2 }, { 1, AVT_EV_RMW, "f", "x", 3 },
		{ 1, WR, "f", "x", 4 }, { 1, RD, "f", "x", 5 }, { 2, RD, "f", "x", 1 },
	};
	struct vf_desc d;
	build(&d, v, 6);
	ck_assert_uint_eq(d.ev[0].occ, 1); /* f's 1st read */
	ck_assert_uint_eq(d.ev[1].occ, 1); /* g's own */
	ck_assert_uint_eq(d.ev[2].occ, 2); /* the RMW: f's 2nd read ... */
	ck_assert_uint_eq(d.ev[2].occ_w, 1); /* ... and 1st write */
	ck_assert_uint_eq(d.ev[3].occ, 2); /* 2nd write */
	ck_assert_uint_eq(d.ev[4].occ, 3);
	ck_assert_uint_eq(d.ev[5].occ, 1); /* another thread counts apart */
	ck_assert_ptr_nonnull(vf_desc_find(&d, 1, 4));
	ck_assert_ptr_null(vf_desc_find(&d, 1, 5));
	vf_desc_release(&d);
}
END_TEST

/* Rebuilt unchanged but moved: every line +12, a heap name with its
 * allocation line: the same plan as the schedule. */
START_TEST(test_moved_lines)
{
	struct ev nw[NBUG];
	memcpy(nw, bug, sizeof nw);
	for (size_t i = 0; i < NBUG; i++)
		nw[i].line += 12;
	struct vf_plan p;
	plan_for(nw, NBUG, &p);
	ck_assert(p.possible);
	ck_assert_uint_eq(p.vanished, 0);
	ck_assert_uint_eq(p.nsteps, 3);
	ck_assert_uint_eq(p.steps[0].thread, 0);
	ck_assert_uint_eq(p.steps[0].target, 3);
	ck_assert_uint_eq(p.steps[1].thread, 1);
	ck_assert_uint_eq(p.steps[1].target, 4);
	ck_assert_uint_eq(p.steps[2].thread, 2);
	ck_assert_uint_eq(p.steps[2].target, 6);
	vf_plan_release(&p);
}
END_TEST

/* The lock held across both sections: the release/acquire pairs vanish,
 * the accesses keep their counterparts; T1's first step ends at its read
 * (its release now comes after its write, past an essential event). */
START_TEST(test_lock_held_across)
{
	static const struct ev nw[] = {
		{ 0, AVT_EV_START, "", "", 0 },	{ 0, AVT_EV_CREATE, "main", "T1", 90 },
		{ 0, AVT_EV_CREATE, "main", "T2", 90 }, { 1, AVT_EV_START, "", "", 0 },
		{ 1, ACQ, "deposit", "lock", 60 },     { 1, RD, "deposit", "balance", 61 },
		{ 1, WR, "deposit", "balance", 62 },   { 1, REL, "deposit", "lock", 63 },
		{ 2, AVT_EV_START, "", "", 0 },	{ 2, ACQ, "deposit", "lock", 60 },
		{ 2, RD, "deposit", "balance", 61 },   { 2, WR, "deposit", "balance", 62 },
		{ 2, REL, "deposit", "lock", 63 },
	};
	struct vf_plan p;
	plan_for(nw, sizeof nw / sizeof nw[0], &p);
	ck_assert(p.possible);
	ck_assert_uint_eq(p.vanished, 3); /* T1's release; T2's release and acquire */
	ck_assert_uint_eq(p.nsteps, 3);
	ck_assert_uint_eq(p.steps[1].thread, 1);
	ck_assert_uint_eq(p.steps[1].target, 3); /* start, acquire, read */
	ck_assert_uint_eq(p.steps[2].target, 4); /* through T2's write */
	vf_plan_release(&p);
}
END_TEST

/* A fetch-add replaces the write: an atomic read-modify-write is the
 * write's counterpart. */
START_TEST(test_fetch_add)
{
	struct ev nw[NBUG];
	memcpy(nw, bug, sizeof nw);
	nw[8].kind = AVT_EV_RMW;
	nw[15].kind = AVT_EV_RMW;
	struct vf_plan p;
	plan_for(nw, NBUG, &p);
	ck_assert(p.possible);
	ck_assert_uint_eq(p.vanished, 0);
	vf_plan_release(&p);
}
END_TEST

/* Lock-free: each thread's read and write became one fetch-add, the
 * counterpart of both (merged); the locks vanish. */
START_TEST(test_merged_into_rmw)
{
	static const struct ev nw[] = {
		{ 0, AVT_EV_START, "", "", 0 },	{ 0, AVT_EV_CREATE, "main", "T1", 90 },
		{ 0, AVT_EV_CREATE, "main", "T2", 90 }, { 1, AVT_EV_START, "", "", 0 },
		{ 1, AVT_EV_RMW, "deposit", "balance", 61 }, { 2, AVT_EV_START, "", "", 0 },
		{ 2, AVT_EV_RMW, "deposit", "balance", 61 },
	};
	struct vf_plan p;
	plan_for(nw, sizeof nw / sizeof nw[0], &p);
	ck_assert(p.possible);
	ck_assert_uint_eq(p.steps[1].thread, 1);
	ck_assert_uint_eq(p.steps[1].target, 2); /* through the fetch-add */
	vf_plan_release(&p);
}
END_TEST

/* The racing thread no longer touches the balance: its write, a pattern
 * event, has no counterpart; what it does there instead is named. */
START_TEST(test_racing_event_gone)
{
	struct ev nw[NBUG];
	memcpy(nw, bug, sizeof nw);
	nw[12].obj = "savings";
	nw[15].obj = "savings";
	struct vf_plan p;
	plan_for(nw, NBUG, &p);
	ck_assert(!p.possible);
	ck_assert_uint_eq(p.parted.thread, 2);
	ck_assert_uint_eq(p.parted.kind, WR);
	ck_assert_uint_eq(p.parted.tindex, 5);
	ck_assert_str_eq(p.parted.func, "deposit");
	ck_assert(p.has_instead);
	ck_assert_uint_eq(p.instead.kind, WR);
	ck_assert_str_eq(p.instead.obj, "savings");
	vf_plan_release(&p);
}
END_TEST

/* An event at a switch is essential unless it is a lock operation: T2's
 * start (the first event after the switch) gone is no longer possible. */
START_TEST(test_switch_event_essential)
{
	struct ev nw[NBUG];
	memcpy(nw, bug, sizeof nw);
	nw[10].func = "renamed"; /* T2's start: no function, but give it one */
	nw[10].kind = AVT_EV_BEGIN;
	struct vf_plan p;
	plan_for(nw, NBUG, &p);
	ck_assert(!p.possible);
	ck_assert_uint_eq(p.parted.thread, 2);
	ck_assert_uint_eq(p.parted.tindex, 0);
	vf_plan_release(&p);
}
END_TEST

/* The accesses moved into another function (the fix takes the lock in
 * the caller): counterparts by the occurrence over the whole thread. */
START_TEST(test_function_moved)
{
	struct ev nw[NBUG];
	memcpy(nw, bug, sizeof nw);
	for (size_t i = 11; i < NBUG; i++)
		nw[i].func = "deposit_locked";
	struct vf_plan p;
	plan_for(nw, NBUG, &p);
	ck_assert(p.possible);
	ck_assert_uint_eq(p.vanished, 0);
	vf_plan_release(&p);
}
END_TEST

/* ... but only where its own function has none: T1 read x in g, then in
 * f; the new T1 reads it in f, then in h.  f's read keeps f's. */
START_TEST(test_same_function_first)
{
	static const struct ev o[] = {
		{ 1, AVT_EV_START, "", "", 0 }, { 1, RD, "g", "x", 5 }, { 1, RD, "f", "x", 9 },
	};
	static const struct ev nw[] = {
		{ 1, AVT_EV_START, "", "", 0 }, { 1, RD, "f", "x", 9 }, { 1, RD, "h", "x", 12 },
	};
	struct vf_desc od, nd;
	build(&od, o, 3);
	build(&nd, nw, 3);
	struct schedule *s = schedule_new();
	schedule_append_run(s, 1, 3);
	struct vf_ref pat[] = { { 1, 2 } }; /* f's read */
	struct vf_plan p;
	ck_assert_int_eq(vf_plan_make(&od, s, pat, 1, &nd, &p), 0);
	ck_assert(p.possible);
	/* g's read, the 1st over the thread, finds f's new read, which f's
	 * own read takes: not before it, so it vanishes; the step runs
	 * through f's read */
	ck_assert_uint_eq(p.nsteps, 1);
	ck_assert_uint_eq(p.steps[0].target, 2);
	ck_assert_uint_eq(p.vanished, 1);
	vf_plan_release(&p);
	schedule_free(s);
	vf_desc_release(&od);
	vf_desc_release(&nd);
}
END_TEST

static struct avt_event mk(uint32_t th, uint32_t idx, uint16_t kind)
{
	struct avt_event e = { .thread = th, .tindex = idx, .kind = kind };
	return e;
}

/* The picker: the step's thread while it can run; when it cannot, the
 * thread of the next step (the holder); after the last step, free. */
START_TEST(test_enact_picks)
{
	struct vf_step st[] = { { 1, 2 }, { 2, 2 }, { 1, 3 } };
	struct vf_plan p = { .steps = st, .nsteps = 3, .possible = true };
	struct vf_enact e;
	struct replay_picker pk;
	ck_assert_int_eq(vf_enact_init(&e, &p, NULL), 0);
	vf_enact_picker(&e, &pk);
	uint32_t both[] = { 1, 2 }, only2[] = { 2 }, only1[] = { 1 };
	ck_assert_uint_eq(pk.pick(pk.ctx, both, 2), 0); /* T1 */
	struct avt_event ev = mk(1, 0, AVT_EV_START);
	pk.event(pk.ctx, &ev);
	ck_assert_uint_eq(pk.pick(pk.ctx, both, 2), 0);
	ev = mk(1, 1, ACQ);
	pk.event(pk.ctx, &ev);
	ck_assert_uint_eq(pk.pick(pk.ctx, both, 2), 1); /* step 2: T2 */
	ev = mk(2, 0, AVT_EV_START);
	pk.event(pk.ctx, &ev);
	ck_assert_uint_eq(pk.pick(pk.ctx, only1, 1), 0); /* T2 blocked: T1 */
	ck_assert_uint_eq(e.held, 1);
	ev = mk(1, 2, RD);
	pk.event(pk.ctx, &ev);
	ck_assert(!vf_enact_done(&e)); /* T2 still owes an event */
	ck_assert_uint_eq(pk.pick(pk.ctx, both, 2), 1);
	ev = mk(2, 1, ACQ);
	pk.event(pk.ctx, &ev);
	ck_assert(vf_enact_done(&e)); /* T1's 3 events were made out of turn */
	ck_assert_uint_eq(e.done_at, 5);
	ck_assert_uint_eq(pk.pick(pk.ctx, only2, 1), 0); /* free: the current one */
	ck_assert_uint_eq(pk.pick(pk.ctx, both, 2), 1);
	vf_enact_release(&e);
}
END_TEST

/* Events that differ from the new recording before the plan's end are a
 * deviation. */
START_TEST(test_enact_deviation)
{
	struct avt_event rev[] = { mk(0, 0, AVT_EV_START), mk(0, 1, RD) };
	rev[0].seq = 0;
	rev[1].seq = 1;
	rev[1].obj = 0x1000;
	struct trace t = { .ev = rev, .nev = 2 };
	struct vf_step st[] = { { 0, 2 } };
	struct vf_plan p = { .steps = st, .nsteps = 1, .possible = true };
	struct vf_enact e;
	struct replay_picker pk;
	ck_assert_int_eq(vf_enact_init(&e, &p, &t), 0);
	vf_enact_picker(&e, &pk);
	pk.event(pk.ctx, &rev[0]);
	ck_assert(!e.deviated);
	struct avt_event other = rev[1];
	other.obj = 0x2000;
	pk.event(pk.ctx, &other);
	ck_assert(e.deviated);
	ck_assert_uint_eq(e.dev_expected.obj, 0x1000);
	vf_enact_release(&e);
}
END_TEST

static Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("plan");
	tcase_add_test(tc, test_occurrences);
	tcase_add_test(tc, test_moved_lines);
	tcase_add_test(tc, test_lock_held_across);
	tcase_add_test(tc, test_fetch_add);
	tcase_add_test(tc, test_merged_into_rmw);
	tcase_add_test(tc, test_racing_event_gone);
	tcase_add_test(tc, test_switch_event_essential);
	tcase_add_test(tc, test_function_moved);
	tcase_add_test(tc, test_same_function_first);
	suite_add_tcase(s, tc);
	TCase *en = tcase_create("enact");
	tcase_add_test(en, test_enact_picks);
	tcase_add_test(en, test_enact_deviation);
	suite_add_tcase(s, en);
	return s;
}

int main(void)
{
	return unit_run(verify_suite());
}
